package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// Parts of a run (result.Part): a request mix's targets now, scenarios
// later; one table for any, in the class table's style.

// maxPartStatuses is how many statuses and error kinds a part's row
// names, the most frequent first; the JSON result holds them all.
const maxPartStatuses = 3

// PartTable writes one row per part (what names the kind: "target"):
// its count and share of the n headline requests, completed, errors
// (errors, timeouts and unfinished, as the errors objective counts
// them), its statuses and error kinds in brief, response p50 and p99,
// service p99 and send-delay p99: too wide for a terminal (as a mix's
// URLs make it), the outcomes in a table, then the latencies.
func PartTable(w io.Writer, what string, n int64, parts []result.Part) error {
	head := []string{what, "count", "share", "completed", "errors", "answers", "resp p50", "resp p99", "service p99", "send delay p99"}
	var rows [][]string
	for _, p := range parts {
		c := p.Counts
		share := "—"
		if n > 0 {
			share = fmt.Sprintf("%.1f %%", 100*float64(c.Scheduled)/float64(n))
		}
		rows = append(rows, []string{p.Name, fmt.Sprint(c.Scheduled), share, fmt.Sprint(c.Completed), fmt.Sprint(c.Errors + c.Timeouts + c.Unfinished),
			partAnswers(p), partMs(p.Response, "p50"), partMs(p.Response, "p99"), partMs(p.Service, "p99"), partMs(p.SendDelay, "p99")})
	}
	return fitTables(w, leftFirst(len(head)), head, rows, slices.Index(head, "resp p50"))
}

// partMs is percentile stat of p, "—" without samples: a part that got
// no request has no latency, not a fast one.
func partMs(p result.Percentiles, stat string) string {
	if p.Count == 0 {
		return "—"
	}
	v, _ := p.Get(stat)
	return ms(v)
}

// partAnswers names a part's statuses and error kinds, the most frequent
// first, at most maxPartStatuses: "200 ×590 · 503 ×10 · refused ×2 …".
func partAnswers(p result.Part) string {
	all := map[string]int64{}
	for k, v := range p.Status {
		all[k] = v
	}
	for k, v := range p.ErrorKinds {
		all[k] += v
	}
	keys := verify.SortedByCount(all)
	var out []string
	for _, k := range keys[:min(len(keys), maxPartStatuses)] {
		out = append(out, fmt.Sprintf("%s ×%d", k, all[k]))
	}
	s := strings.Join(out, " · ")
	if len(keys) > maxPartStatuses {
		s += " …"
	}
	return s
}

// partErrorsNote says what a part table's errors column counts (what
// names the kind of part: "target", "step").
func partErrorsNote(what string) string {
	return "errors = errors + timeouts + unfinished, as the errors objective counts them; a warm-up's requests are in no " + what
}

// partMetric is a part's figure of a run metric, and whether parts have
// it (result.Metric.OfPart). A part's stream figures (a conversation's
// turns) are left out: a diff compares them run-wide only, as it did
// before parts had them, since a scenario's are its own result's, not
// a part's.
func partMetric(p result.Part, metric string) (result.Percentiles, bool) {
	m, ok := result.LookupMetric(metric)
	if !ok || m.OfPart == nil || m.Samples == result.OfStreams {
		return result.Percentiles{}, false
	}
	if v := m.OfPart(&p); v != nil {
		return *v, true
	}
	return result.Percentiles{}, true
}

// compareParts writes, under a diff of two results on metric, the p99 of
// each target side by side, and of each scenario, when both runs had the
// same ones; a line saying why not when only their names differ; nothing
// when neither had a mix or scenarios, or parts lack the metric.
func compareParts(w io.Writer, metric string, a, b *result.Result) error {
	if _, ok := partMetric(result.Part{}, metric); !ok {
		return nil
	}
	if err := compareBy(w, "target", metric, a.Targets, b.Targets); err != nil {
		return err
	}
	return compareBy(w, "scenario", metric, scenarioParts(a), scenarioParts(b))
}

// scenarioParts are a run of scenarios' figures as parts, one a
// scenario, for the tables parts share.
func scenarioParts(res *result.Result) []result.Part {
	out := make([]result.Part, len(res.Scenarios))
	for i, sc := range res.Scenarios {
		r := sc.Result
		out[i] = result.Part{Name: sc.Name, Response: r.Response, Service: r.Service, SendDelay: r.SendDelay, Status: r.Status, ErrorKinds: r.ErrorKinds,
			Counts: result.PartCountsOf(r.Headline())}
	}
	return out
}

// compareBy writes the p99 of metric of each of pa and pb side by side
// (what: "target" or "scenario").
func compareBy(w io.Writer, what, metric string, pa, pb []result.Part) error {
	if len(pa) == 0 && len(pb) == 0 {
		return nil
	}
	if !slices.Equal(result.PartNames(pa), result.PartNames(pb)) {
		fmt.Fprintf(w, "%-8s A and B had different %ss (%d and %d): no comparison by %s\n", what+"s", what, len(pa), len(pb), what)
		return nil
	}
	fmt.Fprintf(w, "\nby %s · %s p99 (ms)\n", what, result.MetricTitle(metric))
	head := []string{what, "A count", "B count", "A", "B", "B − A", "B ÷ A"}
	var rows [][]string
	for i := range pa {
		x, _ := partMetric(pa[i], metric)
		y, _ := partMetric(pb[i], metric)
		diff, r := "—", "—"
		if x.Count > 0 && y.Count > 0 {
			diff, r = signedMs(y.P99-x.P99), ratio(y.P99, x.P99)
		}
		rows = append(rows, []string{pa[i].Name, fmt.Sprint(x.Count), fmt.Sprint(y.Count), partMs(x, "p99"), partMs(y, "p99"), diff, r})
	}
	// A mix's METHOD URL names: the counts, then the figures.
	return fitTables(w, leftFirst(len(head)), head, rows, slices.Index(head, "A"))
}
