package result

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

// Warmup is what the requests scheduled in a run's first Until took: they
// were sent and are counted in Counts (every request is accounted for) and
// the timeline, but kept out of the headline figures (Response, Service,
// SendDelay, classes, Server-Timing) and so out of the objectives.
type Warmup struct {
	Until      string      `json:"until"`
	Scheduled  int64       `json:"scheduled"`
	Completed  int64       `json:"completed"`
	Errors     int64       `json:"errors"`
	Timeouts   int64       `json:"timeouts"`
	Unfinished int64       `json:"unfinished"`
	Response   Percentiles `json:"response"`
	Service    Percentiles `json:"service"`
	// The histograms behind Response and Service, encoded as
	// Result.Histograms are, so that shards' warm-ups merge losslessly.
	ResponseHistogram string `json:"response_histogram,omitempty"`
	ServiceHistogram  string `json:"service_histogram,omitempty"`
}

// SetHistograms sets w's percentiles and encoded histograms.
func (w *Warmup) SetHistograms(response, service *hdrhistogram.Histogram) error {
	w.Response, w.Service = Summarize(response), Summarize(service)
	var err error
	if w.ResponseHistogram, err = EncodeHistogram(response); err != nil {
		return err
	}
	w.ServiceHistogram, err = EncodeHistogram(service)
	return err
}

// merge adds o's warm-up to w's: counts and histograms (sameSettings
// checked every shard has one alike, or none).
func (w *Warmup) merge(o *Warmup, m *merger) *Warmup {
	if o == nil {
		return w
	}
	if o.ResponseHistogram == "" || o.ServiceHistogram == "" {
		m.fail("its warm-up has no histograms (written before they were kept): cannot be merged")
		return w
	}
	sum := Warmup{Until: o.Until}
	if w != nil {
		sum = *w
	}
	sum.Scheduled += o.Scheduled
	sum.Completed += o.Completed
	sum.Errors += o.Errors
	sum.Timeouts += o.Timeouts
	sum.Unfinished += o.Unfinished
	sum.ResponseHistogram, sum.Response = m.hist(sum.ResponseHistogram, o.ResponseHistogram, "warm-up response")
	sum.ServiceHistogram, sum.Service = m.hist(sum.ServiceHistogram, o.ServiceHistogram, "warm-up service")
	return &sum
}
