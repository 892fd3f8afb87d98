package engine

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// BenchmarkWorkerDo is the per-request hot path of the open model: one
// worker sends one GET over a kept-alive loopback connection, reads the
// response and fills the record (no recorder: see recorder.BenchmarkAdd).
// The server is rawServer, which allocates nothing per request, so
// allocs/op are the client's: net/http's transport and openload's own.
func BenchmarkWorkerDo(b *testing.B) {
	srv := newRawServer()
	defer srv.Close()
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"net-http", Config{}},
		{"net-http-header", Config{Header: http.Header{"X-Tenant": {"a"}, "Authorization": {"Bearer x"}}}},
		{"lean", Config{Lean: true}},
		{"lean-header", Config{Lean: true, Header: http.Header{"X-Tenant": {"a"}, "Authorization": {"Bearer x"}}}},
		// The CLI's default: the stub's headers looked for, none sent.
		{"lean-auto", Config{Lean: true, ClassHeaders: []string{"X-Stub-Source"}, ServerTiming: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := bc.cfg
			cfg.URL, cfg.Method, cfg.Timeout = mustURL(b, srv.URL), http.MethodGet, 5*time.Second
			benchDo(b, cfg, "", 0) // rawServer's answers carry no class and no timings
		})
	}
	// The same request path with a mix: three GETs in turn (mix3), and
	// one GET whose path and a header are templated (templated), which
	// rawServer answers as it answers the single URL.
	for _, cl := range []clientCase{openClients[0], openClients[1]} {
		for _, m := range benchMixes {
			b.Run(cl.test+"-"+m.name, func(b *testing.B) {
				cfg := Config{Lean: cl.lean, Timeout: 5 * time.Second, Targets: m.targets(b, srv.URL)}
				benchDo(b, cfg.mixed(), "", 0)
			})
		}
	}
}

// benchMixes are the request mixes of the benchmarks, each of GETs that
// rawServer answers: the cost of the mix against the single URL.
var benchMixes = []struct {
	name    string
	targets func(tb testing.TB, base string) []Target
}{
	{"mix3", func(tb testing.TB, base string) []Target {
		var ts []Target
		for _, p := range []string{"/a", "/b?x=1", "/c/d"} {
			ts = append(ts, Target{Method: http.MethodGet, URL: mustURL(tb, base+p), Header: http.Header{"X-Tag": {p}}})
		}
		return ts
	}},
	{"templated", func(tb testing.TB, base string) []Target {
		return []Target{{Method: http.MethodGet, URL: mustURL(tb, base), Path: decT("/item/"), Headers: map[string]Template{"X-Id": decT("id-")}}}
	}},
}

// benchDo times one worker's do over b.N requests on one connection of
// a generator with cfg. Every record must be completed, with timings
// Server-Timing metrics and, unless class is "", class as the value of
// the first class header.
func benchDo(b *testing.B, cfg Config, class string, timings int) {
	cfg.Connections = 1
	g := &generator{cfg: cfg, drain: context.Background(), start: time.Now(), pick: newPicker(&cfg)}
	defer g.connect()()
	w := g.newWorker()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r := w.do(item{seq: uint64(i)})
		if r.Outcome != recorder.Completed || r.NTimings != timings || (class != "" && r.Class[0] != class) {
			b.Fatalf("outcome %v, class %q, %d timings", r.Outcome, r.Class[0], r.NTimings)
		}
	}
}

// benchRun times a whole open run of b.N requests with cfg into rec, on
// a schedule of 1,000,000/s, so that the generator, not the clock, sets
// the pace. Every request must complete, on cl's client.
func benchRun(b *testing.B, cfg Config, cl clientCase, rec *recorder.Recorder) {
	b.ReportAllocs()
	b.ResetTimer()
	stats, err := Run(context.Background(), cfg, schedule.NewConstant(1e6, time.Duration(b.N)*time.Microsecond), rec)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if c := rec.Counts(); c.Completed != int64(b.N) || stats.Client != cl.name {
		b.Fatalf("counts %+v with %s, want %d completed with %s", c, stats.Client, b.N, cl.name)
	}
}

// BenchmarkOpenRun is a whole open run per b.N requests (benchRun): the
// schedule, the client, the loopback rawServer and the recorder, on 4 connections.
// ns/op is the engine's throughput on this machine, server included;
// allocs/op its allocations per recorded request. The "-auto" runs look
// for the stub's headers, as the CLI does by default, in answers that
// have none.
func BenchmarkOpenRun(b *testing.B) {
	srv := newRawServer()
	defer srv.Close()
	for _, cl := range append(openClients, autoClients...) {
		b.Run(cl.test, func(b *testing.B) {
			cfg := Config{URL: mustURL(b, srv.URL), Method: http.MethodGet, Connections: 4, Timeout: 5 * time.Second,
				Drain: 5 * time.Second, Lean: cl.lean, Epoll: cl.epoll}
			if strings.HasSuffix(cl.test, "-auto") {
				cfg.ClassHeaders, cfg.ServerTiming = []string{"X-Stub-Source"}, true
			}
			benchRun(b, cfg, cl, recorder.New(nil))
		})
	}
	for _, cl := range openClients {
		for _, m := range benchMixes {
			b.Run(cl.test+"-"+m.name, func(b *testing.B) {
				cfg := Config{Connections: 4, Timeout: 5 * time.Second, Drain: 5 * time.Second, Lean: cl.lean, Epoll: cl.epoll,
					Targets: m.targets(b, srv.URL)}
				benchRun(b, cfg, cl, recorder.New(nil))
			})
		}
	}
}

// autoClients are the lean client and the event loop, for the "-auto"
// runs of BenchmarkOpenRun.
var autoClients = []clientCase{{"lean-auto", ClientLean, true, false}, {"epoll-auto", epollClient, true, true}}

// BenchmarkStubHeaders is BenchmarkWorkerDo and BenchmarkOpenRun against
// a server that answers as the stub does, with X-Stub-Source and
// Server-Timing, which the run groups by and parses: the cost of reading
// them on each client.
func BenchmarkStubHeaders(b *testing.B) {
	srv := newRawServerOf(stubResponse)
	defer srv.Close()
	base := func() Config {
		return Config{URL: mustURL(b, srv.URL), Method: http.MethodGet, Timeout: 5 * time.Second, Drain: 5 * time.Second,
			ClassHeaders: []string{"X-Stub-Source"}, ServerTiming: true}
	}
	for _, cl := range openClients {
		b.Run("do/"+cl.test, func(b *testing.B) {
			if cl.epoll {
				b.Skip("the event loop has no worker")
			}
			cfg := base()
			cfg.Lean = cl.lean
			benchDo(b, cfg, "model", 3)
		})
	}
	for _, cl := range openClients {
		b.Run("run/"+cl.test, func(b *testing.B) {
			cfg := base()
			cfg.Connections, cfg.Lean, cfg.Epoll = 4, cl.lean, cl.epoll
			rec := recorder.New(nil)
			rec.TrackClasses(cfg.ClassHeaders)
			benchRun(b, cfg, cl, rec)
			var res result.Result
			if err := rec.Fill(&res); err != nil {
				b.Fatal(err)
			}
			if len(res.Classes) != 1 || res.Classes[0].Values[0].Count != int64(b.N) || len(res.ServerTiming) != 3 {
				b.Fatalf("classes %+v, %d Server-Timing metrics", res.Classes, len(res.ServerTiming))
			}
		})
	}
}
