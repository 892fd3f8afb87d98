package report

import (
	"github.com/openload/openload/result"

	"fmt"
	"io"
	"math"
)

// Side is one column of a diff: a label and the percentiles of one
// histogram, in ms.
type Side struct {
	Label string
	P     result.Percentiles
}

// diffRows are the rows of a diff, top to bottom, with their
// recorder.Percentiles names.
var diffRows = []struct{ label, key string }{
	{"p50", "p50"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"},
	{"p99.9", "p999"}, {"p99.99", "p9999"}, {"max", "max"}, {"mean", "mean"},
}

// DiffTable writes a and b side by side, percentile by percentile (p50 …
// p99.99, max, mean), with the difference b − a and the ratio b ÷ a.
func DiffTable(w io.Writer, a, b Side) error {
	t := newTable(w, leftFirst(5), "ms", a.Label, b.Label, b.Label+" − "+a.Label, b.Label+" ÷ "+a.Label)
	for _, r := range diffRows {
		va, _ := a.P.Get(r.key)
		vb, _ := b.P.Get(r.key)
		if err := t.Append([]string{r.label, ms(va), ms(vb), signedMs(vb - va), ratio(vb, va)}); err != nil {
			return err
		}
	}
	return t.Render()
}

// signedMs writes a difference in ms with its sign, to the µs; one that
// rounds to zero is "+0.000", never "-0.000".
func signedMs(d float64) string {
	if math.Round(d*1000) == 0 {
		d = 0
	}
	return fmt.Sprintf("%+.3f", d)
}

// ratio writes b ÷ a with two significant digits below 1 (×0.78, ×0.050,
// ×0.0050), so that a small ratio never rounds to ×0.00 (×0 is b = 0);
// with fewer decimals as it grows (×1.30, ×76.3, ×573); "—" when a is not
// positive.
func ratio(b, a float64) string {
	if a <= 0 {
		return "—"
	}
	r := b / a
	switch {
	case r >= 100:
		return fmt.Sprintf("×%.0f", r)
	case r >= 10:
		return fmt.Sprintf("×%.1f", r)
	case r >= 0.1:
		return fmt.Sprintf("×%.2f", r)
	case r == 0:
		return "×0"
	}
	// 10^-(k+1) ≤ r < 10^-k: k+2 decimals give two significant digits
	// (at most 12 decimals: a ratio of ms figures is never that small).
	decimals := min(1-int(math.Floor(math.Log10(r))), 12)
	return fmt.Sprintf("×%.*f", decimals, r)
}

// Divergence thresholds: response and service time diverge at a percentile
// when the response time exceeds the service time by at least DivergeRatio
// of it and by at least DivergeMinMs (the default send-delay budget), so
// that microseconds of noise on a fast service do not count.
const (
	DivergeRatio = 1.1
	DivergeMinMs = 1.0
)

// Diverge reports whether response time diverges from service time at one
// percentile (both in ms); see DivergeRatio.
func Diverge(service, response float64) bool {
	return response-service >= DivergeMinMs && response >= DivergeRatio*service
}

// ServiceVsResponse writes the diff of one result: its service time (what a
// closed-loop tool reports) next to its response time (what users waited),
// and a one-line verdict. When the two diverge at p99, the verdict says what
// share of the response time at p99 is waiting that happened before the
// request was sent: (response p99 − service p99) ÷ response p99.
func ServiceVsResponse(w io.Writer, name string, res *result.Result, service, response result.Percentiles) error {
	fmt.Fprintf(w, "openload diff · %s\n", name)
	fmt.Fprintf(w, "run      %s · %s %s\n", res.Config.Schedule, res.Config.Method, res.Config.Target)
	fmt.Fprintf(w, "count    service %d (requests sent) · response %d (requests scheduled)%s\n\n",
		service.Count, response.Count, neverSent(res))
	if err := DiffTable(w, Side{"service", service}, Side{"response", response}); err != nil {
		return err
	}
	fmt.Fprintln(w, "service = done − sent (what a closed-loop tool reports) · response = done − scheduled (what users waited)")
	fmt.Fprintf(w, "\nverdict  %s\n", serviceVerdict(res, service, response))
	if res.Closed() {
		note := "closed loop: its scheduled times are its users' own slots, so response time cannot show the waiting its users caused by not sending"
		if c := res.Corrected; c != nil {
			note += fmt.Sprintf("; the corrected histogram (%s interval) puts p99 at %s ms", c.Interval, ms(c.P99))
		}
		fmt.Fprintf(w, "note     %s; compare with an open run: openload diff CLOSED.json OPEN.json\n", note)
	}
	return nil
}

func serviceVerdict(res *result.Result, service, response result.Percentiles) string {
	if !Diverge(service.P99, response.P99) {
		agree := fmt.Sprintf("service and response time agree at p99 (%s vs %s ms, within ×%.1f or %.0f ms)", ms(service.P99), ms(response.P99), DivergeRatio, DivergeMinMs)
		if res.Closed() {
			agree += ", as they do in any closed loop: its users waited instead of sending"
			if n := res.Counts.Skipped; n > 0 {
				agree += fmt.Sprintf(", and the %d requests they never sent are in neither histogram", n)
			}
			return agree
		}
		return agree + ": requests left on schedule, so waiting before the send did not reach the tail"
	}
	wait := response.P99 - service.P99
	return fmt.Sprintf("DIVERGE: at p99, %.1f %% of the response time (%s of %s ms) is waiting that happened before the request was sent; service time alone, what a closed-loop tool reports, says %s ms",
		100*wait/response.P99, ms(wait), ms(response.P99), ms(service.P99))
}

func neverSent(res *result.Result) string {
	if res.Counts.Skipped == 0 {
		return ""
	}
	return fmt.Sprintf(" · never sent %d", res.Counts.Skipped)
}

// Compare writes two results side by side on one metric (A and B are the
// files as named on the command line), with the difference B − A, the
// ratio B ÷ A and a one-line summary at p99; when both sent the same
// targets, each target's p99 side by side (part.go).
func Compare(w io.Writer, metric string, nameA string, a *result.Result, pa result.Percentiles, nameB string, b *result.Result, pb result.Percentiles) error {
	fmt.Fprintf(w, "openload diff · %s (ms)\n", result.MetricTitle(metric))
	fmt.Fprintf(w, "A        %s · %s · %d values%s\n", nameA, a.Config.Schedule, pa.Count, neverSent(a))
	fmt.Fprintf(w, "B        %s · %s · %d values%s\n\n", nameB, b.Config.Schedule, pb.Count, neverSent(b))
	if err := DiffTable(w, Side{"A", pa}, Side{"B", pb}); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nverdict  %s\n", compareVerdict(metric, pa, pb))
	return compareParts(w, metric, a, b) // part.go
}

func compareVerdict(metric string, a, b result.Percentiles) string {
	counts := ""
	if a.Count != b.Count {
		counts = fmt.Sprintf("; A counted %d values, B %d (%+d)", a.Count, b.Count, b.Count-a.Count)
	}
	lo, hi := min(a.P99, b.P99), max(a.P99, b.P99)
	if !Diverge(lo, hi) {
		return fmt.Sprintf("A and B agree at p99 (%s vs %s ms, within ×%.1f or %.0f ms)%s", ms(a.P99), ms(b.P99), DivergeRatio, DivergeMinMs, counts)
	}
	which, other := "B", "A"
	if a.P99 > b.P99 {
		which, other = "A", "B"
	}
	return fmt.Sprintf("at p99 %s's %s is %s %s's (%s vs %s ms)%s", which, result.MetricTitle(metric), ratio(hi, lo), other, ms(hi), ms(lo), counts)
}
