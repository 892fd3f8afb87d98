package result

import (
	"encoding/base64"
	"math"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 1 hour, 3 significant digits, values in µs.
const (
	HistLowest  = 1
	HistHighest = int64(time.Hour / time.Microsecond)
	HistDigits  = 3
)

// NewHistogram returns an empty histogram with openload's range.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistDigits)
}

// Percentiles summarise one histogram, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// Ms is a value in µs in ms, rounded to the µs, as Percentiles hold it.
func Ms(us float64) float64 { return math.Round(us) / 1000 }

// Summarize reads the percentiles of h (µs values) in milliseconds.
func Summarize(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	q := h.ValueAtPercentiles([]float64{50, 90, 95, 99, 99.9, 99.99})
	return Percentiles{
		Count: h.TotalCount(),
		P50:   Ms(float64(q[50])),
		P90:   Ms(float64(q[90])),
		P95:   Ms(float64(q[95])),
		P99:   Ms(float64(q[99])),
		P999:  Ms(float64(q[99.9])),
		P9999: Ms(float64(q[99.99])),
		Max:   Ms(float64(h.Max())),
		Mean:  Ms(h.Mean()),
	}
}

// Get returns the named percentile: p50, p90, p95, p99, p999, p9999, max or
// mean.
func (p Percentiles) Get(name string) (float64, bool) {
	switch name {
	case "p50":
		return p.P50, true
	case "p90":
		return p.P90, true
	case "p95":
		return p.P95, true
	case "p99":
		return p.P99, true
	case "p999":
		return p.P999, true
	case "p9999":
		return p.P9999, true
	case "max":
		return p.Max, true
	case "mean":
		return p.Mean, true
	}
	return 0, false
}

// Histograms holds the encoded histograms (EncodeHistogram), values in
// microseconds.
type Histograms struct {
	Unit      string `json:"unit"`
	Response  string `json:"response"`
	Service   string `json:"service"`
	SendDelay string `json:"send_delay"`
	Corrected string `json:"corrected,omitempty"`
	// Answered and Unanswered split Response when some requests got no
	// answer (see Result.Answered); empty otherwise.
	Answered   string `json:"answered,omitempty"`
	Unanswered string `json:"unanswered,omitempty"`
	// The stream figures' histograms (stream.go), when the run streamed.
	TTFTResponse string `json:"ttft_response,omitempty"`
	TTFTService  string `json:"ttft_service,omitempty"`
	ITL          string `json:"itl,omitempty"`
	TPOT         string `json:"tpot,omitempty"`
	TTFAResponse string `json:"ttfa_response,omitempty"`
	TTFAService  string `json:"ttfa_service,omitempty"`
}

// Corrected summarises the response times of a closed run paced to a rate
// with HdrHistogram's correction for coordinated omission (see
// Recorder.Correct), and names the expected interval the correction
// assumed: one request every Interval per user.
type Corrected struct {
	Interval string `json:"interval"`
	Percentiles
}

// EncodeHistogram returns h as HdrHistogram's standard text form: the V2
// compressed encoding in base64 ("HISTFAAAA…"), which HdrHistogram's
// libraries decode as is (Java's and JavaScript's
// decodeFromCompressedBase64, Go's Decode).
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// oldPrefix starts every histogram written before the standard form: that
// form base64-encoded once more ("HIST" → "SElTV"). A standard string
// always starts "HIST", from the V2 compressed cookie 0x1c849314.
const oldPrefix = "SElTV"

// DecodeHistogram is the inverse of EncodeHistogram. It also reads the
// form results were written in before (see oldPrefix).
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if strings.HasPrefix(s, oldPrefix) {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		s = string(b)
	}
	return hdrhistogram.Decode([]byte(s))
}

// standardForm returns an old-form histogram string (see oldPrefix) in the
// standard form; any other string, or one that does not unwrap to base64
// text, is returned as it is, for DecodeHistogram to judge when it is used.
// Unwrapping is a base64 decode, not a histogram decode: the histogram's
// bytes are kept exactly.
func standardForm(s string) string {
	if !strings.HasPrefix(s, oldPrefix) {
		return s
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s
	}
	if _, err := base64.StdEncoding.DecodeString(string(b)); err != nil {
		return s
	}
	return string(b)
}

// namedHistogram is one of Histograms' strings and its metric name.
type namedHistogram struct {
	name string
	s    *string
}

// named lists h's histogram strings by metric name: the one list that
// Histogram, Read's upgrade of old forms and merge go through.
func (h *Histograms) named() [12]namedHistogram {
	return [...]namedHistogram{
		{"response", &h.Response}, {"service", &h.Service}, {"send_delay", &h.SendDelay},
		{"corrected", &h.Corrected}, {"answered", &h.Answered}, {"unanswered", &h.Unanswered},
		{"ttft_response", &h.TTFTResponse}, {"ttft_service", &h.TTFTService}, {"itl", &h.ITL}, {"tpot", &h.TPOT},
		{"ttfa_response", &h.TTFAResponse}, {"ttfa_service", &h.TTFAService},
	}
}

// merge adds o's histograms to h's; Answered is derived (derive).
func (h Histograms) merge(o Histograms, m *merger) Histograms {
	h.Unit = "us"
	theirs := o.named()
	for i, p := range h.named() {
		if p.name != "answered" {
			*p.s, _ = m.hist(*p.s, *theirs[i].s, p.name)
		}
	}
	h.Answered = ""
	return h
}

// Subtract returns a − b bucket by bucket: the values of a that are not
// in b, where b holds a subset of a's values (the unanswered requests'
// response times within all of them).
func Subtract(a, b *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	s, bs := a.Export(), b.Export()
	for i := range s.Counts {
		if i < len(bs.Counts) {
			s.Counts[i] -= bs.Counts[i]
		}
	}
	return hdrhistogram.Import(s)
}

// merge keeps the correction's interval; its histogram is merged with
// the others (Histograms.merge) and its percentiles derived.
func (c *Corrected) merge(o *Corrected) *Corrected {
	if c == nil && o != nil {
		return &Corrected{Interval: o.Interval}
	}
	return c
}
