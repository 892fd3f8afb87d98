package metrics_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/metrics"
	"github.com/openload/openload/schedule"
)

// A decoder of remote write's WriteRequest written apart from the
// encoder: generic protobuf fields (protowire), read by the field numbers
// of prometheus/prompb's remote.proto and types.proto.

type pbField struct {
	num protowire.Number
	typ protowire.Type
	b   []byte // BytesType
	n   uint64 // VarintType, Fixed64Type
}

func pbFields(t *testing.T, b []byte) []pbField {
	t.Helper()
	var out []pbField
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := pbField{num: num, typ: typ}
		switch typ {
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			f.n, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			f.n, n = protowire.ConsumeFixed64(b)
		default:
			t.Fatalf("field %d: wire type %d is not in the schema", num, typ)
		}
		if n < 0 {
			t.Fatalf("field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		out = append(out, f)
	}
	return out
}

type pushedSample struct {
	key   string // name{labels sorted}, as seriesKey
	value float64
	ms    int64
}

type pushedMeta struct {
	typ  uint64
	help string
}

// decodeWrite reads a WriteRequest: its series (each one sample, its
// labels checked sorted) and its metadata by family.
func decodeWrite(t *testing.T, b []byte) ([]pushedSample, map[string]pushedMeta) {
	t.Helper()
	var samples []pushedSample
	meta := map[string]pushedMeta{}
	for _, f := range pbFields(t, b) {
		switch f.num {
		case 1: // TimeSeries
			var names []string
			labels := map[string]string{}
			var ss []pushedSample
			for _, sf := range pbFields(t, f.b) {
				switch sf.num {
				case 1: // Label
					var name, value string
					for _, lf := range pbFields(t, sf.b) {
						switch lf.num {
						case 1:
							name = string(lf.b)
						case 2:
							value = string(lf.b)
						}
					}
					names = append(names, name)
					labels[name] = value
				case 2: // Sample
					var s pushedSample
					for _, vf := range pbFields(t, sf.b) {
						switch vf.num {
						case 1:
							s.value = math.Float64frombits(vf.n)
						case 2:
							s.ms = int64(vf.n)
						}
					}
					ss = append(ss, s)
				}
			}
			if !slices.IsSorted(names) {
				t.Errorf("labels not sorted by name: %v", names)
			}
			name := labels["__name__"]
			delete(labels, "__name__")
			for _, s := range ss {
				s.key = seriesKey(name, labels)
				samples = append(samples, s)
			}
		case 3: // MetricMetadata
			var m pushedMeta
			var family string
			for _, mf := range pbFields(t, f.b) {
				switch mf.num {
				case 1:
					m.typ = mf.n
				case 2:
					family = string(mf.b)
				case 4:
					m.help = string(mf.b)
				}
			}
			meta[family] = m
		default:
			t.Errorf("WriteRequest field %d is not in the schema", f.num)
		}
	}
	return samples, meta
}

func seriesKey(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k, v := range labels {
		keys = append(keys, k+"="+strconv.Quote(v))
	}
	slices.Sort(keys)
	return name + "{" + strings.Join(keys, ",") + "}"
}

// scrapeText reads the text format line by line, without expfmt: its
// series (extra added to every label set) and their values.
func scrapeText(t *testing.T, e *metrics.Exporter, extra map[string]string) map[string]float64 {
	t.Helper()
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := map[string]float64{}
	for line := range strings.Lines(w.Body.String()) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		series := line[:i]
		labels := map[string]string{}
		name, rest, _ := strings.Cut(series, "{")
		for rest = strings.TrimSuffix(rest, "}"); rest != ""; {
			k, after, _ := strings.Cut(rest, "=")
			val, err := strconv.QuotedPrefix(after)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			labels[k], _ = strconv.Unquote(val)
			rest = strings.TrimPrefix(after[len(val):], ",")
		}
		for k, v := range extra {
			labels[k] = v
		}
		out[seriesKey(name, labels)] = v
	}
	return out
}

// receiver is a remote-write endpoint that keeps what it is sent, and
// answers fail's status to the first failures requests.
type receiver struct {
	t        *testing.T
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	failures int
	got      chan struct{}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	raw, err := snappy.Decode(nil, body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r.Method != http.MethodPost || err != nil {
		rc.t.Errorf("%s with a body snappy cannot decode (%v)", r.Method, err)
	}
	rc.bodies = append(rc.bodies, raw)
	rc.headers = append(rc.headers, r.Header.Clone())
	if rc.got != nil {
		select {
		case rc.got <- struct{}{}:
		default:
		}
	}
	if len(rc.bodies) <= rc.failures {
		http.Error(w, "out of order sample\nsecond line", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestPushEqualsScrape: what a push sends is what a scrape of the same
// registry serves: the same series, the openload ones with the same
// values, plus the push's own labels, every sample at the push's time,
// with the headers of remote write 1.0 and the caller's.
func TestPushEqualsScrape(t *testing.T) {
	s := mixedServer(t)
	u, _ := url.Parse(s.URL)
	e := metrics.New(map[string]string{"run": "test"})
	src := e.Source(map[string]string{"scenario": "one"})
	if _, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config: engine.Config{URL: u, Connections: 4, Timeout: 5 * time.Second, Drain: 5 * time.Second,
			ClassHeaders: []string{"X-Class"}, Lean: true, Resend: engine.ResendNever, Observe: src.Observe},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 100, Duration: 500 * time.Millisecond},
	}); err != nil {
		t.Fatal(err)
	}
	rc := &receiver{t: t}
	rs := httptest.NewServer(rc)
	defer rs.Close()
	extra := map[string]string{"job": "openload", "instance": "h1"}
	before := time.Now().UnixMilli()
	p := e.StartPush(metrics.PushConfig{URL: rs.URL + "/api/v1/write", Labels: extra,
		Header: http.Header{"Authorization": {"Bearer t0ken"}}}, time.Hour)
	stats, err := p.Stop(context.Background())
	after := time.Now().UnixMilli()
	if err != nil || stats != (metrics.PushStats{Pushes: 1}) {
		t.Fatalf("the final push: %v, stats %+v; want it landed, one push", err, stats)
	}
	scraped := scrapeText(t, e, extra)
	if len(rc.bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(rc.bodies))
	}
	h := rc.headers[0]
	for k, v := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
		"X-Prometheus-Remote-Write-Version": "0.1.0", "Authorization": "Bearer t0ken"} {
		if h.Get(k) != v {
			t.Errorf("header %s: %q, want %q", k, h.Get(k), v)
		}
	}
	samples, meta := decodeWrite(t, rc.bodies[0])
	pushed := map[string]float64{}
	for _, s := range samples {
		if _, dup := pushed[s.key]; dup {
			t.Errorf("series %s pushed twice", s.key)
		}
		pushed[s.key] = s.value
		if s.ms < before || s.ms > after || s.ms != samples[0].ms {
			t.Errorf("%s at %d ms, want one time for all within [%d, %d]", s.key, s.ms, before, after)
		}
	}
	openload := 0
	for k, v := range scraped {
		got, ok := pushed[k]
		switch {
		case !ok:
			t.Errorf("scraped but not pushed: %s", k)
		case strings.HasPrefix(k, "openload_") && got != v:
			t.Errorf("%s: pushed %v, scraped %v", k, got, v)
		}
		if strings.HasPrefix(k, "openload_") {
			openload++
		}
	}
	for k := range pushed {
		if _, ok := scraped[k]; !ok {
			t.Errorf("pushed but not scraped: %s", k)
		}
	}
	for _, k := range []string{
		`openload_requests_completed_total{instance="h1",job="openload",run="test",scenario="one"}`,
		`openload_response_time_seconds_bucket{instance="h1",job="openload",le="+Inf",run="test",scenario="one"}`,
		`openload_responses_total{code="503",instance="h1",job="openload",run="test",scenario="one"}`,
	} {
		if _, ok := pushed[k]; !ok {
			t.Errorf("not pushed: %s", k)
		}
	}
	if m := meta["openload_requests_completed_total"]; m.typ != 1 || m.help == "" {
		t.Errorf("metadata of the completed counter: %+v, want type 1 (COUNTER) and its help", m)
	}
	if m := meta["openload_response_time_seconds"]; m.typ != 3 {
		t.Errorf("metadata of the response histogram: %+v, want type 3 (HISTOGRAM)", m)
	}
	t.Logf("%d series pushed, %d of them openload's, equal to the scrape", len(pushed), openload)
}

// TestPushFailureCounted: a push the endpoint refuses is counted with its
// cause on one line, and the pushes after it go on, each later than the
// last; an endpoint that is gone fails the final push, which says so.
func TestPushFailureCounted(t *testing.T) {
	e := metrics.New(map[string]string{"run": "f"})
	rc := &receiver{t: t, failures: 1, got: make(chan struct{}, 1)}
	rs := httptest.NewServer(rc)
	p := e.StartPush(metrics.PushConfig{URL: rs.URL}, time.Millisecond)
	for range 3 { // the periodic pushes: the refused one and two more
		<-rc.got
	}
	stats, err := p.Stop(context.Background())
	rs.Close()
	// The third periodic push may be cut short by Stop, and so not
	// counted: the final one carries the same figures.
	if err != nil || stats.Failed != 1 || stats.Pushes < 3 || len(rc.bodies) < 4 || stats.Err == nil ||
		!strings.Contains(stats.Err.Error(), "400") || strings.Contains(stats.Err.Error(), "\n") {
		t.Errorf("stats %+v, final %v, %d requests; want the first of ≥ 3 failed with its status on one line, the final landed", stats, err, len(rc.bodies))
	}
	last := int64(0)
	for i, b := range rc.bodies {
		samples, _ := decodeWrite(t, b)
		if len(samples) == 0 || samples[0].ms <= last {
			t.Errorf("push %d: %d samples at %v ms, after one at %d", i, len(samples), samples, last)
			break
		}
		last = samples[0].ms
	}
	t.Logf("stats %+v", stats)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := fmt.Sprintf("http://%s/api/v1/write", ln.Addr())
	ln.Close()
	stats, err = e.StartPush(metrics.PushConfig{URL: gone}, time.Hour).Stop(context.Background())
	if err == nil || stats.Failed != 1 || stats.Pushes != 1 || strings.Contains(err.Error(), gone) {
		t.Errorf("to a closed port: final %v, stats %+v; want one failed push, its cause without the URL", err, stats)
	}
}
