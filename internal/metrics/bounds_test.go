package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/metrics"
	"github.com/openload/openload/schedule"
)

// TestMaxLatency: an exporter given the run's timeout serves the bounds
// up to the first at or above it, one without serves them all; both
// count every request.
func TestMaxLatency(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer s.Close()
	u, _ := url.Parse(s.URL)
	cut, all := metrics.New(map[string]string{"run": "cut"}), metrics.New(map[string]string{"run": "all"})
	cut.SetMaxLatency(300 * time.Millisecond)
	a, b := cut.Source(nil), all.Source(nil)
	res, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config: engine.Config{URL: u, Connections: 2, Timeout: 300 * time.Millisecond, Drain: time.Second,
			Observe: func(l engine.Live) { a.Observe(l); b.Observe(l) }},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 50, Duration: 200 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		e      *metrics.Exporter
		bounds []float64
	}{{cut, metrics.Bounds(300 * time.Millisecond)}, {all, metrics.LatencyBounds}} {
		h := scrape(t, c.e)["openload_response_time_seconds"].Metric[0].Histogram
		bk := h.GetBucket()[:len(h.GetBucket())-1] // +Inf aside
		if len(bk) != len(c.bounds) || bk[len(bk)-1].GetUpperBound() != c.bounds[len(c.bounds)-1] {
			t.Errorf("%d buckets up to %g, want %d up to %g", len(bk), bk[len(bk)-1].GetUpperBound(), len(c.bounds), c.bounds[len(c.bounds)-1])
		}
		if h.GetSampleCount() != uint64(res.Counts.Completed) || bk[len(bk)-1].GetCumulativeCount() != h.GetSampleCount() {
			t.Errorf("count %d, under the last bound %d, completed %d", h.GetSampleCount(), bk[len(bk)-1].GetCumulativeCount(), res.Counts.Completed)
		}
	}
	if last := metrics.Bounds(300 * time.Millisecond); last[len(last)-1] != 0.316 {
		t.Errorf("Bounds(300ms) ends at %g, want 0.316", last[len(last)-1])
	}
}
