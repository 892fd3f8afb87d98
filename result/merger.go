package result

import (
	"fmt"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/openload/openload/field"
)

// merger adds one result into a sum: the input's name for the errors,
// the first error (m.err; what follows it is not used), and the values
// the histograms' merges could not hold.
type merger struct {
	name    string
	err     error
	dropped int64
	// sums holds the histograms hist encoded, by their encoding, so that
	// adding to a sum or deriving its figures does not decode it again.
	sums map[string]*hdrhistogram.Histogram
}

// fail keeps the first error, naming the input.
func (m *merger) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("%s: "+format, append([]any{m.name}, args...)...) // format is the caller's constant
	}
}

// hist adds the encoded histograms a (the sum so far) and b (the
// input's); "" is none, and the sum of none is "". The sum is encoded
// from a histogram of openload's range, whatever the inputs' ranges, so
// that any grouping of a merge writes the same bytes. Values it cannot
// hold count in m.dropped.
func (m *merger) hist(a, b, what string) (string, Percentiles) {
	if a == "" && b == "" {
		return "", Percentiles{}
	}
	h := m.sums[a]
	delete(m.sums, a) // added to below: a no longer names it
	if h == nil {
		h = NewHistogram()
		if !m.addTo(h, a, what) {
			return "", Percentiles{}
		}
	}
	if !m.addTo(h, b, what) {
		return "", Percentiles{}
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		m.fail("%s histogram: %v", what, err)
	}
	if m.sums == nil {
		m.sums = map[string]*hdrhistogram.Histogram{}
	}
	m.sums[enc] = h
	return enc, Summarize(h)
}

// addTo adds the encoded histogram s ("" is none) to h.
func (m *merger) addTo(h *hdrhistogram.Histogram, s, what string) bool {
	if s == "" {
		return true
	}
	o, err := DecodeHistogram(s)
	if err != nil {
		m.fail("%s histogram: %v", what, err)
		return false
	}
	m.dropped += h.Merge(o)
	return true
}

// decode is DecodeHistogram, from the sums hist made when s is one.
func (m *merger) decode(s string) (*hdrhistogram.Histogram, error) {
	if h := m.sums[s]; h != nil {
		return h, nil
	}
	return DecodeHistogram(s)
}

// addCounts returns a + b key by key, nil when both are empty.
func addCounts(a, b map[string]int64) map[string]int64 {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]int64, max(len(a), len(b)))
	for _, m := range [...]map[string]int64{a, b} {
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

// orEmpty is m, or an empty map for nil.
func orEmpty(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

// The refusals Merge and MergeIntervalLogs share: one text each.

// errGivenTwice refuses the input name, given before under the same name;
// what it holds is said in parentheses ("shard 1/4"), unless "".
func errGivenTwice(name, what string) error {
	if what == "" {
		return fmt.Errorf("%s: given twice", name)
	}
	return fmt.Errorf("%s: given twice (%s)", name, what)
}

// errAgain refuses the input name, which holds what the input other
// holds too.
func errAgain(name, what, other string) error {
	return fmt.Errorf("%s: %s again (%s has it too)", name, what, other)
}

// errNotSameRun refuses the input name, whose what is a where ref's is b:
// it is not of ref's run. what is words ("seed"), or a field of the run's
// options in braces ("{StartAt}"): then the error is a *field.Error of
// that field, value a.
func errNotSameRun(name, what string, a any, ref string, b any) error {
	format := "%s: " + what + " %v, but %s has %v: not a shard of the same run" // what is the caller's constant
	if f, ok := strings.CutPrefix(what, "{"); ok && strings.HasSuffix(f, "}") {
		return field.Errorf(strings.TrimSuffix(f, "}"), a, format, name, a, ref, b)
	}
	return fmt.Errorf(format, name, a, ref, b)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
