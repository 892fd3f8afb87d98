package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// headsCfg watches the stub's class header, a header the generated heads
// repeat, and Server-Timing both as a class header (its first value) and
// as metrics.
var headsCfg = Config{ClassHeaders: []string{"X-Stub-Source", "x-a", "Server-Timing"}, ServerTiming: true}

// sameAsNetHTTP checks hr's reading of the head raw against net/http's:
// when hr reads it (a plain head), the record it fills must equal the one
// fromHeader fills from the header http.ReadResponse reads. It reports
// whether hr read it.
func sameAsNetHTTP(t *testing.T, hr *headReader, raw []byte) bool {
	t.Helper()
	var h heads
	if hd, st := hr.head(raw, &h); st != h1.HeadSimple || hd.Chunked {
		return false
	}
	resp, err := h1.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("quickHead read %q, ReadResponse: %v", raw, err)
	}
	var quick, net recorder.Record
	h.apply(&quick)
	fromHeader(headsCfg, resp.Header, &net)
	if quick.Class != net.Class || quick.NTimings != net.NTimings || quick.Timings != net.Timings {
		t.Fatalf("%q:\nquickHead class %q, timings %v\nnet/http  class %q, timings %v",
			raw, quick.Class, quick.Timings[:quick.NTimings], net.Class, net.Timings[:net.NTimings])
	}
	return true
}

// plainHead is a plain response head with these header lines (each ending
// in CRLF) and an empty body.
func plainHead(lines string) []byte {
	return []byte("HTTP/1.1 200 OK\r\n" + lines + "Content-Length: 0\r\n\r\n")
}

// TestHeadsAsNetHTTP: generated heads, with the watched headers in any
// case, repeated, empty, padded, and Server-Timing values with quotes,
// commas inside quotes, parameters and malformed metrics, are read as
// net/http reads them, and all but the few with more Server-Timing lines
// than a Watch keeps are read on the quick path.
func TestHeadsAsNetHTTP(t *testing.T) {
	names := []string{"X-Stub-Source", "x-stub-source", "X-STUB-SOURCE", "X-A", "x-a", "Server-Timing", "server-timing", "SERVER-TIMING", "X-Other", "Content-Type"}
	values := []string{"model", "fallback", " model ", "\tfallback\t", "", "a b", `"quoted, value"`,
		"queue;dur=0.036, model;dur=50.329, total;dur=50.369", "miss", "db;dur=53, app;dur=47.2;desc=\"a, b; c\"",
		"cache;desc=hit;dur=0.5", " , z ; dur = 7 ", "a;dur=1;dur=2", "a;dur=abc, b;dur=NaN, c;dur=\"4\"",
		"=bad;dur=1, good;dur=2", `x;desc="unterminated, y;dur=3`, "m1;dur=1,m2;dur=2,m3;dur=3,m4;dur=4,m5;dur=5", "ü;dur=1, ok;dur=1e-3"}
	rng := rand.New(rand.NewPCG(1, 19))
	hr := newHeadReader(headsCfg)
	quick := 0
	const heads = 3000
	for range heads {
		var b strings.Builder
		for range rng.IntN(12) {
			fmt.Fprintf(&b, "%s:%s%s\r\n", names[rng.IntN(len(names))], []string{"", " ", "  "}[rng.IntN(3)], values[rng.IntN(len(values))])
		}
		if sameAsNetHTTP(t, hr, plainHead(b.String())) {
			quick++
		}
	}
	// Nine or more of the twelve lines at most would have to be
	// Server-Timing for a head to go to ReadResponse: rare.
	if quick < heads*99/100 {
		t.Errorf("%d of %d heads read on the quick path", quick, heads)
	}
	many := plainHead(strings.Repeat("Server-Timing: a;dur=1\r\n", h1.MaxTimingLines+1))
	if sameAsNetHTTP(t, hr, many) {
		t.Errorf("%d Server-Timing lines read on the quick path, a Watch keeps %d", h1.MaxTimingLines+1, h1.MaxTimingLines)
	}
}

// FuzzHeads: whatever the header lines, a head the quick path reads gives
// the record net/http's header gives.
func FuzzHeads(f *testing.F) {
	f.Add("X-Stub-Source: model\nServer-Timing: queue;dur=0.036, model;dur=50.329, total;dur=50.369\n")
	f.Add("server-timing: a;dur=1\nSERVER-TIMING: b;desc=\"x, y\";dur=2\nx-a:\nX-A: second\n")
	f.Add("X-Stub-Source:   fallback  \nServer-Timing: miss, =bad;dur=1, c;dur=\"4\"\n")
	hr := newHeadReader(headsCfg)
	f.Fuzz(func(t *testing.T, lines string) {
		sameAsNetHTTP(t, hr, plainHead(strings.ReplaceAll(lines, "\n", "\r\n")))
	})
}

// TestInterner: a value costs one allocation the first time, none after,
// and is the same string each time; past the bound, values are still
// right, each a string of its own.
func TestInterner(t *testing.T) {
	in := interner{max: 2}
	a := in.get([]byte("model"))
	if n := testing.AllocsPerRun(100, func() {
		if s := in.get([]byte("model")); unsafe.StringData(s) != unsafe.StringData(a) {
			t.Fatal("model interned twice")
		}
	}); n != 0 {
		t.Errorf("%v allocations per known value", n)
	}
	in.get([]byte("fallback"))
	for range 2 {
		if s := in.get([]byte("limiter")); s != "limiter" {
			t.Errorf("past the bound: %q", s)
		}
	}
	if len(in.vals) != 2 || in.get(nil) != "" {
		t.Errorf("table %q", in.vals)
	}
}

// TestQuickHeadAllocatesNothing: reading the stub's head, its class
// header and its three Server-Timing metrics, allocates nothing once the
// values are known.
func TestQuickHeadAllocatesNothing(t *testing.T) {
	hr := newHeadReader(Config{ClassHeaders: []string{"X-Stub-Source"}, ServerTiming: true})
	var h heads
	hr.head(stubResponse, &h)
	if n := testing.AllocsPerRun(100, func() {
		if _, st := hr.head(stubResponse, &h); st != h1.HeadSimple || h.class[0] != "model" || h.n != 3 {
			t.Fatalf("class %q, %d timings", h.class[0], h.n)
		}
	}); n != 0 {
		t.Errorf("%v allocations per head", n)
	}
	if newHeadReader(Config{}) != nil {
		t.Error("a head reader for a run that reads only the status")
	}
}

// TestClientsReadHeadsAlike: the three clients, against a server that
// cycles through heads with the stub's headers in different shapes (and
// one chunked answer, which the quick path lends to http.ReadResponse),
// record the same classes and Server-Timing metrics, and the event loop
// stays in use.
func TestClientsReadHeadsAlike(t *testing.T) {
	answers := [][]byte{
		stubResponse,
		plainHead("x-stub-source: fallback\r\nserver-timing: queue;dur=3\r\nServer-Timing: total;dur=4;desc=\"a, b\"\r\n"),
		plainHead("X-STUB-SOURCE:   model  \r\nServer-Timing: miss, model;dur=\"7.5\"\r\n"),
		[]byte("HTTP/1.1 200 OK\r\nX-Stub-Source: fallback\r\nServer-Timing: total;dur=9\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
	}
	const n = 40
	var want *result.Result
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		var next atomic.Int64
		u := rawAnswers(t, func(c net.Conn, _ *bufio.Reader, _ <-chan struct{}) bool {
			_, err := c.Write(answers[(next.Add(1)-1)%int64(len(answers))])
			return err == nil
		})
		cfg := Config{URL: mustURL(t, u), Method: "GET", Connections: 4, Timeout: 5 * time.Second, Drain: 2 * time.Second,
			Lean: cl.lean, Epoll: cl.epoll, ClassHeaders: []string{"X-Stub-Source"}, ServerTiming: true}
		rec := recorder.New(nil)
		rec.TrackClasses(cfg.ClassHeaders)
		stats, err := Run(t.Context(), cfg, schedule.NewConstant(400, n*2500*time.Microsecond), rec)
		if err != nil {
			t.Fatal(err)
		}
		checkIdentity(t, rec, n)
		if stats.Client != cl.name {
			t.Errorf("client %s, want %s", stats.Client, cl.name)
		}
		var res result.Result
		if err := rec.Fill(&res); err != nil {
			t.Fatal(err)
		}
		if v := res.Classes[0].Values; len(v) != 2 || v[0].Count != n/2 || v[1].Count != n/2 {
			t.Errorf("classes %+v: want model and fallback, %d each", v, n/2)
		}
		counts := map[string]int64{}
		for _, m := range res.ServerTiming {
			counts[m.Name] = m.Percentiles.Count
			m.Histogram = ""
		}
		if c := map[string]int64{"queue": n / 2, "model": n / 2, "total": n * 3 / 4}; !reflect.DeepEqual(counts, c) {
			t.Errorf("Server-Timing metrics counted %v, want %v", counts, c)
		}
		if want == nil {
			want = &res
			return
		}
		// The same answers: the same durations, whatever the client. The
		// order of the metrics is the order the recorder first saw them,
		// which depends on which answers completed first.
		for i := range res.ServerTiming {
			res.ServerTiming[i].Histogram, want.ServerTiming[i].Histogram = "", ""
		}
		byName := func(a, b result.ServerMetric) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(res.ServerTiming, byName)
		slices.SortFunc(want.ServerTiming, byName)
		if !reflect.DeepEqual(res.ServerTiming, want.ServerTiming) {
			t.Errorf("Server-Timing %+v\n%s had %+v", res.ServerTiming, openClients[0].test, want.ServerTiming)
		}
	})
}
