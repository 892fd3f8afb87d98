package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// decT is a test template (not internal/mix's): its text, then the
// request's number in decimal.
type decT string

func (t decT) Append(dst []byte, seq uint64) []byte {
	return strconv.AppendUint(append(dst, t...), seq, 10)
}

// heard is what a mix server read of one request.
type heard struct {
	method, uri, tag, id, seq, body string
}

// mixServer counts what it reads, on HTTP/1.1 and h2c: each request's
// method, target, X-Tag, X-Id and X-Seq headers and body.
type mixServer struct {
	URL   string
	mu    sync.Mutex
	heard []heard
}

func newMixServer(t *testing.T) *mixServer {
	m := &mixServer{}
	srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := heard{r.Method, r.RequestURI, r.Header.Get("X-Tag"), r.Header.Get("X-Id"), r.Header.Get("X-Seq"), string(b)}
		m.mu.Lock()
		m.heard = append(m.heard, h)
		m.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	m.URL = srv.URL
	return m
}

// count is how many requests the server read of each "METHOD target".
func (m *mixServer) count() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := map[string]int{}
	for _, h := range m.heard {
		c[h.method+" "+h.uri]++
	}
	return c
}

// records runs cfg against base with s and returns the records by seq.
func records(t *testing.T, base string, cfg Config, s schedule.Schedule) (map[uint64]recorder.Record, *recorder.Recorder, Stats) {
	t.Helper()
	var mu sync.Mutex
	got := map[uint64]recorder.Record{}
	cfg.onRecord = func(r *recorder.Record) {
		mu.Lock()
		got[r.Seq] = *r
		mu.Unlock()
	}
	rec, stats := runAgainst(t, base, cfg, s)
	return got, rec, stats
}

// threeTargets are a GET, a POST and a PUT to three paths of base, each
// with its own tag and body.
func threeTargets(t testing.TB, base string) []Target {
	ts := []Target{
		{Method: http.MethodGet, URL: mustURL(t, base+"/a?x=1"), Header: http.Header{"X-Tag": {"a"}}},
		{Method: http.MethodPost, URL: mustURL(t, base+"/b"), Header: http.Header{"X-Tag": {"b"}}, Body: []byte("bb")},
		{Method: http.MethodPut, URL: mustURL(t, base+"/c"), Header: http.Header{"X-Tag": {"c"}}, Body: []byte("ccc")},
	}
	return ts
}

func mixConfig(cl clientCase) Config {
	cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 4}
	if cl.test == "h2c" {
		cfg.Protocol = H2C
	}
	return cfg
}

// Three targets in turn: each gets exactly a third of the requests, with
// its own method, target, headers and body, on every client, and each
// record names the target its request went to.
func TestMixInTurn(t *testing.T) {
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
		srv := newMixServer(t)
		cfg := mixConfig(cl)
		cfg.Targets = threeTargets(t, srv.URL)
		recs, rec, stats := records(t, srv.URL, cfg, schedule.NewConstant(300, time.Second))
		if c := checkIdentity(t, rec, 300); c.Completed != 300 || stats.Client != cl.name {
			t.Fatalf("counts %+v on %s, want 300 completed on %s", c, stats.Client, cl.name)
		}
		if got, want := srv.count(), map[string]int{"GET /a?x=1": 100, "POST /b": 100, "PUT /c": 100}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("server read %v, want %v", got, want)
		}
		srv.mu.Lock()
		for _, h := range srv.heard {
			want := map[string]heard{"GET": {tag: "a"}, "POST": {tag: "b", body: "bb"}, "PUT": {tag: "c", body: "ccc"}}[h.method]
			if h.tag != want.tag || h.body != want.body {
				t.Errorf("%s %s: tag %q body %q, want %q %q", h.method, h.uri, h.tag, h.body, want.tag, want.body)
			}
		}
		srv.mu.Unlock()
		for seq, r := range recs {
			if int(r.Target) != int(seq%3) {
				t.Errorf("record %d names target %d, want %d", seq, r.Target, seq%3)
			}
		}
	})
}

// Weighted 1:2:1 under a seed: the server reads of each target exactly
// what TargetIndex draws for the run's seqs, and the records agree. The
// draw is a pure function of seed and seq, so the counts are fixed for a
// seed; the bound checks that they follow the weights. Of 300 requests
// target i has a binomial count, mean 300·pᵢ (75, 150, 75) and standard
// deviation √(300·pᵢ·(1−pᵢ)) (7.5, 8.7, 7.5): ±45 is over 5 deviations,
// which a correct draw misses with probability below 10⁻⁶ for any seed,
// while drawing in turn (100 each) or ignoring a weight fails it.
func TestMixWeighted(t *testing.T) {
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
		srv := newMixServer(t)
		cfg := mixConfig(cl)
		cfg.Targets = threeTargets(t, srv.URL)
		cfg.TargetWeights, cfg.TargetSeed = []float64{1, 2, 1}, 42
		recs, rec, _ := records(t, srv.URL, cfg, schedule.NewConstant(300, time.Second))
		checkIdentity(t, rec, 300)
		drawn := [3]int{}
		for seq := range uint64(300) {
			drawn[cfg.TargetIndex(seq)]++
			if r, ok := recs[seq]; !ok || int(r.Target) != cfg.TargetIndex(seq) {
				t.Errorf("record %d: target %d (recorded %v), want %d", seq, r.Target, ok, cfg.TargetIndex(seq))
			}
		}
		got := srv.count()
		for i, k := range []string{"GET /a?x=1", "POST /b", "PUT /c"} {
			if got[k] != drawn[i] {
				t.Errorf("server read %d of %s, TargetIndex drew %d", got[k], k, drawn[i])
			}
			if mean := 300 * cfg.TargetWeights[i] / 4; math.Abs(float64(drawn[i])-mean) > 45 {
				t.Errorf("target %d drawn %d times of 300, want %v ± 45", i, drawn[i], mean)
			}
		}
	})
}

// templatedTargets are a target with its path templated, one with a
// header and its body templated, and a static one; each says its
// request's number in X-Seq.
func templatedTargets(t testing.TB, base string) []Target {
	seq := map[string]Template{"X-Seq": decT("")}
	return []Target{
		{Method: http.MethodGet, URL: mustURL(t, base+"/ignored"), Path: decT("/p/"), Headers: seq},
		{Method: http.MethodPost, URL: mustURL(t, base+"/q"), Header: http.Header{"X-Id": {"replaced"}},
			Headers: map[string]Template{"X-Seq": decT(""), "X-Id": decT("id-")}, BodyT: decT(`{"n":`)},
		{Method: http.MethodPut, URL: mustURL(t, base+"/r"), Body: []byte("rr"), Headers: seq},
	}
}

// Templates make every request distinct at the server: request seq's
// path, header and body carry seq, on every client.
func TestMixTemplated(t *testing.T) {
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
		srv := newMixServer(t)
		cfg := mixConfig(cl)
		cfg.Targets = templatedTargets(t, srv.URL)
		recs, rec, _ := records(t, srv.URL, cfg, schedule.NewConstant(300, 300*time.Millisecond))
		if c := checkIdentity(t, rec, 90); c.Completed != 90 {
			t.Fatalf("counts %+v, want 90 completed", c)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		distinct := map[heard]bool{}
		for _, h := range srv.heard {
			distinct[h] = true
			seq, err := strconv.ParseUint(h.seq, 10, 64)
			if err != nil {
				t.Fatalf("X-Seq %q", h.seq)
			}
			want := []heard{
				{method: "GET", uri: "/p/" + h.seq},
				{method: "POST", uri: "/q", id: "id-" + h.seq, body: `{"n":` + h.seq},
				{method: "PUT", uri: "/r", body: "rr"},
			}[seq%3]
			want.seq = h.seq
			if h != want {
				t.Errorf("read %+v, want %+v", h, want)
			}
			if r := recs[seq]; int(r.Target) != int(seq%3) || r.Outcome != recorder.Completed {
				t.Errorf("record %d: target %d, outcome %v", seq, r.Target, r.Outcome)
			}
		}
		if len(distinct) != 90 {
			t.Errorf("%d distinct requests of %d", len(distinct), len(srv.heard))
		}
	})
}

// Two shards of one schedule send, for each request of the whole, the
// target the whole run would, weighted draw and templates included: the
// server reads every seq once, each with its target's path.
func TestMixShardsAgree(t *testing.T) {
	for _, cl := range []clientCase{openClients[0], openClients[2]} {
		t.Run(cl.test, func(t *testing.T) {
			srv := newMixServer(t)
			cfg := mixConfig(cl)
			cfg.Targets = templatedTargets(t, srv.URL)
			cfg.TargetWeights, cfg.TargetSeed = []float64{1, 2, 1}, 7
			whole := func() schedule.Schedule { return schedule.NewConstant(300, 500*time.Millisecond) }
			var wg sync.WaitGroup
			var shardRecs [2]map[uint64]recorder.Record
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					shardRecs[i], _, _ = records(t, srv.URL, cfg, schedule.NewShard(whole(), schedule.Shard{Index: i, Of: 2}))
				}()
			}
			wg.Wait()
			seen := map[uint64]string{}
			srv.mu.Lock()
			for _, h := range srv.heard {
				seq, _ := strconv.ParseUint(h.seq, 10, 64)
				if _, dup := seen[seq]; dup {
					t.Errorf("seq %d read twice", seq)
				}
				seen[seq] = h.method
			}
			srv.mu.Unlock()
			if len(seen) != 150 {
				t.Fatalf("server read %d seqs, want 150", len(seen))
			}
			for seq := range uint64(150) {
				k := cfg.TargetIndex(seq)
				if want := cfg.Targets[k].Method; seen[seq] != want {
					t.Errorf("seq %d: read %s, the whole run's target %d is %s", seq, seen[seq], k, want)
				}
				r, ok := shardRecs[seq%2][seq]
				if !ok || int(r.Target) != k {
					t.Errorf("seq %d: shard %d's record %v names target %d, want %d", seq, seq%2, ok, r.Target, k)
				}
			}
		})
	}
}

// A mix with a HEAD target reads HEAD's bodyless answers per target: the
// lean client sends it (the event loop does not read HEAD), and the GET
// beside it keeps reading its bodies.
func TestMixWithHead(t *testing.T) {
	srv := newMixServer(t)
	cfg := Config{Lean: true, Epoll: true, Connections: 2, Targets: []Target{
		{Method: http.MethodGet, URL: mustURL(t, srv.URL+"/g")},
		{Method: http.MethodHead, URL: mustURL(t, srv.URL+"/h")},
	}}
	rec, stats := runAgainst(t, srv.URL, cfg, schedule.NewConstant(200, 200*time.Millisecond))
	if c := checkIdentity(t, rec, 40); c.Completed != 40 || stats.Client != ClientLean {
		t.Errorf("counts %+v on %s, want 40 completed on lean", c, stats.Client)
	}
	if got := srv.count(); got["GET /g"] != 20 || got["HEAD /h"] != 20 {
		t.Errorf("server read %v, want 20 each", got)
	}
}

// The clients' picker draws what TargetIndex does, zero weights (never
// drawn) and many targets included; BodyIndex is the picker's too.
func TestPickerIsTargetIndex(t *testing.T) {
	for _, ws := range [][]float64{nil, {1, 2, 1}, {0, 1, 0, 3, 0}, {1e-300, 1, 1e300}, make([]float64, 1000)} {
		cfg := Config{Targets: make([]Target, max(len(ws), 3)), TargetWeights: ws, TargetSeed: 99}
		if len(ws) == 1000 {
			for i := range ws {
				ws[i] = float64(i % 7)
			}
		}
		p := newPicker(&cfg)
		for seq := range uint64(5000) {
			i := cfg.TargetIndex(seq)
			if got := p.index(seq); got != i {
				t.Fatalf("weights %v, seq %d: picker %d, TargetIndex %d", ws[:min(len(ws), 5)], seq, got, i)
			}
			if ws != nil && ws[i] == 0 {
				t.Fatalf("weights %v: seq %d drew target %d of weight 0", ws[:min(len(ws), 5)], seq, i)
			}
		}
	}
	body := Config{Bodies: make([][]byte, 5), BodySample: true, BodySeed: 3, BodyOffset: 11}
	p := newPicker(&body)
	for seq := range uint64(1000) {
		if p.index(seq) != body.BodyIndex(seq) {
			t.Fatalf("seq %d: picker %d, BodyIndex %d", seq, p.index(seq), body.BodyIndex(seq))
		}
	}
}

// Validate refuses a mix one run cannot send, naming the target.
func TestMixValidate(t *testing.T) {
	u := func(s string) *url.URL { return mustURL(t, s) }
	two := func() []Target {
		return []Target{{Name: "first", URL: u("http://h:8080/a")}, {Name: "second", URL: u("http://h:8080/b")}}
	}
	ok := Config{Connections: 1, Timeout: time.Second, Targets: two()}
	if err := ok.Validate(); err != nil {
		t.Fatalf("two targets: %v", err)
	}
	dflt := ok
	dflt.Targets = []Target{{URL: u("http://H/a")}, {URL: u("http://h:80/b")}}
	if err := dflt.Validate(); err != nil {
		t.Errorf("the default port written out: %v", err)
	}
	for _, c := range []struct {
		name  string
		set   func(*Config)
		field string
		want  string
	}{
		{"bodies", func(c *Config) { c.Bodies = [][]byte{nil} }, "Bodies", "cannot go with Targets"},
		{"weights count", func(c *Config) { c.TargetWeights = []float64{1} }, "TargetWeights", "1 weights for 2 targets"},
		{"weights alone", func(c *Config) { c.Targets, c.TargetWeights = nil, []float64{1} }, "TargetWeights", "without Targets"},
		{"negative weight", func(c *Config) { c.TargetWeights = []float64{1, -1} }, "TargetWeights", "target 1 (second) must be a finite number ≥ 0, got -1"},
		{"NaN weight", func(c *Config) { c.TargetWeights = []float64{math.NaN(), 1} }, "TargetWeights", "got NaN"},
		{"zero weights", func(c *Config) { c.TargetWeights = []float64{0, 0} }, "TargetWeights", "sum to a finite number > 0, got 0"},
		{"other host", func(c *Config) { c.Targets[1].URL = u("http://other:8080/b") }, "Targets", "target 1 (second) goes to http://other:8080"},
		{"other port", func(c *Config) { c.Targets[1].URL = u("http://h:8081/b") }, "Targets", "target 1 (second) goes to http://h:8081"},
		{"other scheme", func(c *Config) { c.Targets[1].URL = u("https://h:8080/b") }, "Targets", "goes to https://h:8080"},
		{"no URL", func(c *Config) { c.Targets[1].URL = nil }, "Targets", "target 1 (second) needs an http or https URL"},
		{"credentials", func(c *Config) { c.Targets[1].URL = u("http://u:p@h:8080/b") }, "Targets", "other credentials"},
		{"method", func(c *Config) { c.Targets[1].Method = "GE T" }, "Targets", `method "GE T" is not a valid HTTP method`},
		{"header", func(c *Config) { c.Targets[1].Header = http.Header{"X Y": {"1"}} }, "Targets", `header "X Y" is not a valid header name`},
		{"templated host", func(c *Config) { c.Targets[0].Headers = map[string]Template{"Host": decT("")} }, "Targets", "target 0 (first)'s header Host cannot be templated"},
		{"templated length", func(c *Config) { c.Targets[0].Headers = map[string]Template{"Content-Length": decT("")} }, "Targets", "cannot be templated"},
		{"twice in case", func(c *Config) { c.Targets[0].Headers = map[string]Template{"x-id": decT(""), "X-Id": decT("")} }, "Targets", "given twice, in two cases"},
		{"bad value", func(c *Config) { c.Targets[0].Headers = map[string]Template{"X-Id": decT("a\r\n")} }, "Targets", "not a valid header value"},
		{"relative path", func(c *Config) { c.Targets[0].Path = decT("p/") }, "Targets", `writes "p/0" for request 0`},
		{"authority path", func(c *Config) { c.Targets[0].Path = decT("//p/") }, "Targets", "starting with one /"},
		{"space in path", func(c *Config) { c.Targets[0].Path = decT("/a b/") }, "Targets", "not a path"},
	} {
		cfg := ok
		cfg.Targets = two()
		c.set(&cfg)
		err := cfg.Validate()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s: …%s…", c.name, err, c.field, c.want)
		}
	}
	// Over MaxTargets is refused (checked on the count: a table of
	// 1 M targets is too big to make in a test).
	var fe0 *field.Error
	if err := tooManyTargets(MaxTargets + 1); !errors.As(err, &fe0) || fe0.Field != "Targets" || !strings.Contains(err.Error(), "at most 1048576") {
		t.Errorf("too many: %v", err)
	}
	// The first target's URL is the run's: a protocol that does not suit
	// its scheme is refused as for a single URL.
	h2 := ok
	h2.Protocol = HTTP2
	var fe *field.Error
	if err := h2.Validate(); !errors.As(err, &fe) || fe.Field != "Protocol" {
		t.Errorf("HTTP/2 to http targets: %v, want Protocol refused", err)
	}
}

// rawBodyServer is rawServer for requests with a Content-Length body,
// which it reads and drops without allocating.
func newRawBodyServer(tb testing.TB) *rawServer {
	s, err := rawtcp.Serve(func(c net.Conn, _ <-chan struct{}) {
		br := bufio.NewReaderSize(c, 4096)
		for {
			n := int64(0)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				line = bytes.TrimRight(line, "\r\n")
				if len(line) == 0 {
					break
				}
				if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
					for _, d := range v {
						n = n*10 + int64(d-'0')
					}
				}
			}
			if _, err := br.Discard(int(n)); err != nil {
				return
			}
			if _, err := c.Write(rawResponse); err != nil {
				return
			}
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return &rawServer{Server: s, URL: "http://" + s.Addr()}
}

// On the lean path a templated mix allocates nothing per request once
// the connection's buffer is warm, as the single URL does: the request
// is written into that buffer, templates and Content-Length included.
func TestMixLeanAllocsNone(t *testing.T) {
	srv := newRawBodyServer(t)
	cfg := Config{Lean: true, Connections: 1, Timeout: 5 * time.Second, StampHeader: "X-Arrival"}
	cfg.Targets = templatedTargets(t, srv.URL)
	cfg = cfg.mixed()
	g := &generator{cfg: cfg, drain: t.Context(), start: time.Now(), pick: newPicker(&cfg)}
	defer g.connect()()
	w := g.newWorker()
	seq := uint64(0)
	do := func() {
		if r := w.do(item{seq: seq}); r.Outcome != recorder.Completed {
			t.Fatalf("seq %d: %v %v", seq, r.Outcome, r.Kind)
		}
		seq++
	}
	for range 30 {
		do() // warm: the buffer grows to the longest request
	}
	if n := testing.AllocsPerRun(300, do); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}
