package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/internal/stats"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// A sweep, a search and repeats render from their sweep file
// (result.File): a live command builds the file it would save and renders
// it, `openload report FILE` reads it back and renders it the same way.

// SweepText writes what the live command prints of f: a sweep's table and
// knee, a search's probes and answer, the spread of repeats. Nothing for a
// file without points.
func SweepText(w io.Writer, f *result.File) error {
	if len(f.Points) == 0 {
		return nil
	}
	switch f.Kind {
	case result.KindSearch:
		return SearchTable(w, f)
	case result.KindRepeats:
		return Spread(w, f.Points)
	}
	if err := SweepTable(w, f.Points, kneeIndex(f)); err != nil {
		return err
	}
	return KneeLine(w, f)
}

// kneeIndex is the index of f's knee in f.Points, -1 when none.
func kneeIndex(f *result.File) int {
	if f.Knee == nil {
		return -1
	}
	return f.Knee.Point - 1
}

// KneeLine says where a sweep's knee is, or that it has none.
func KneeLine(w io.Writer, f *result.File) error {
	if k := f.Knee; k != nil {
		_, err := fmt.Fprintf(w, "\nknee: %g/s (point %d): %s\n", k.Rate, k.Point, k.Why)
		return err
	}
	factor := "the knee factor"
	if f.KneeFactor > 0 {
		factor = fmt.Sprintf("%g", f.KneeFactor)
	}
	top := 0.0
	for _, p := range f.Points {
		if p.Open() {
			top = max(top, p.Rate)
		}
	}
	_, err := fmt.Fprintf(w, "\nknee: none up to %g/s (response p99 stayed within %s × the lowest rate's, every objective held)\n", top, factor)
	return err
}

func ms1(v float64) string { return fmt.Sprintf("%.1f", v) }

// Figure writes a figure of an objective (ms, or a share) as a sweep
// reports it; an infinite one stands for a run stopped early or without
// data.
func Figure(v float64, share bool) string {
	switch {
	case math.IsInf(v, 0):
		return "past (stopped early, or no data)"
	case share:
		return fmt.Sprintf("%.3g %%", 100*v)
	}
	return fmt.Sprintf("%.3f ms", v)
}

// valid reports whether no check of res failed: the point measured
// validly.
func valid(res *result.Result) bool {
	return !slices.ContainsFunc(res.Checks, func(c result.Check) bool { return c.Severity == string(verify.Fail) })
}

// noData is the first objective of a point whose figure had no samples,
// nil when every objective had data or the point stopped early.
func noData(p result.FilePoint) *result.SLO {
	for i, s := range p.Result.SLOs {
		if s.NoData && p.Stopped == "" {
			return &p.Result.SLOs[i]
		}
	}
	return nil
}

// classValues are the values of the first class header any point saw, at
// most three, by their count over the sweep.
func classValues(points []result.FilePoint) (string, []string) {
	header := ""
	counts := map[string]int64{}
	for _, p := range points {
		if len(p.Result.Classes) == 0 {
			continue
		}
		ct := p.Result.Classes[0]
		header = ct.Header
		for _, v := range ct.Values {
			counts[v.Value] += v.Count
		}
	}
	var vals []string
	for v := range counts {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, func(a, b string) int {
		if counts[a] != counts[b] {
			return int(counts[b] - counts[a])
		}
		return strings.Compare(a, b)
	})
	return header, vals[:min(len(vals), 3)]
}

// share is the share of res's requests whose first class header had
// value, in % (the column's header carries the unit): "0" when the value
// never occurred, "—" when res has no class header.
func share(res *result.Result, value string) string {
	if len(res.Classes) == 0 {
		return "—"
	}
	for _, v := range res.Classes[0].Values {
		if v.Value == value {
			return fmt.Sprintf("%.1f", 100*v.Share)
		}
	}
	return "0"
}

// SweepTable writes one row per point: offered rate, completed per
// second, response p50/p90/p99, service p99, send delay p99, errors, class
// shares, each objective's verdict and figure (as the point's result
// stored it), and a note (the knee, an early stop, a failed check). knee
// is an index of points, < 0: none.
//
// When the points streamed (their results have a Stream section) the
// table trades response p90 for the stream's figures: goodput per second
// next to completed per second (with objectives per request), output
// tokens per second, TTFT p99 from the schedule, ITL p50 and p99, TPOT
// p50. These are what grow with a batching server's occupancy.
//
// To fit a terminal the headers are short and the lines above the table
// say the rest: latencies are in ms, the bare percentiles are response
// time's; the class header is named once, its values heading their
// columns (in %); and the objectives share one column, a mark and a
// figure each, in the order those lines name them.
func SweepTable(w io.Writer, points []result.FilePoint, knee int) error {
	if len(points) == 0 {
		return nil
	}
	header, vals := classValues(points)
	stream, goodput := streamed(points)
	var head []string
	switch {
	case stream && goodput:
		head = []string{"offered/s", "completed/s", "goodput/s", "tokens/s", "p50", "p99", "serv p99", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50", "delay p99", "errors"}
	case stream:
		head = []string{"offered/s", "completed/s", "tokens/s", "p50", "p99", "serv p99", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50", "delay p99", "errors"}
	default:
		head = []string{"offered/s", "completed/s", "p50", "p90", "p99", "serv p99", "delay p99", "errors"}
	}
	head = append(head, vals...)
	slos := points[0].Result.SLOs
	if len(slos) > 0 {
		head = append(head, "objectives")
	}
	head = append(head, "note")
	sweepLegend(w, header, vals, slos, stream)
	align := make(tw.Alignment, len(head))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[len(align)-1] = tw.AlignLeft
	if len(slos) > 0 {
		align[len(align)-2] = tw.AlignLeft // the marks one under the other
	}
	var rows [][]string
	past := false
	for i, p := range points {
		r := p.Result
		c := r.Counts
		failed := c.Errors + c.Timeouts + c.Unfinished
		errs := "0"
		if failed > 0 {
			errs = fmt.Sprintf("%d (%.1f %%)", failed, 100*float64(failed)/math.Max(float64(c.Scheduled), 1))
		}
		var row []string
		if stream {
			row = streamRow(p, goodput, errs)
		} else {
			row = []string{offered(p), fmt.Sprintf("%.1f", p.Completed()),
				ms1(r.Response.P50), ms1(r.Response.P90), ms1(r.Response.P99), ms1(r.Service.P99), ms1(r.SendDelay.P99), errs}
		}
		for _, v := range vals {
			row = append(row, share(r, v))
		}
		if len(slos) > 0 {
			var objs []string
			for _, s := range r.SLOs {
				mark := "✓"
				if !s.Pass {
					mark = "✗"
				}
				fig := cellFigure(s.Measured, s.Share)
				if s.Count && !math.IsInf(s.Measured, 0) {
					fig = fmt.Sprintf("%.0f", s.Measured) // a count of requests (status.503<=0)
				}
				if s.NoData {
					fig = "no data"
				}
				past = past || math.IsInf(s.Measured, 0) && !s.NoData
				objs = append(objs, mark+" "+fig)
			}
			row = append(row, strings.Join(objs, "  "))
		}
		row = append(row, note(p, i == knee))
		rows = append(rows, row)
	}
	if err := fitTables(w, align, head, rows, slices.Index(head, "errors")); err != nil {
		return err
	}
	if past {
		_, err := fmt.Fprintln(w, PastNote)
		return err
	}
	return nil
}

// sweepLegend writes the lines above a sweep's table: the unit of its
// latencies and the abbreviations of their headers, the class header its
// value columns share and the objectives, in the order the objectives
// column has them.
func sweepLegend(w io.Writer, header string, vals []string, slos []result.SLO, stream bool) {
	pcts := "p50, p90, p99"
	if stream {
		pcts = "p50, p99"
	}
	legend := "latencies in ms · " + pcts + " = response time (done − scheduled) · serv = service time · delay = send delay"
	if stream {
		legend += " · TTFT = first token − scheduled"
	}
	for _, l := range wrap(legend, legendWidth) {
		fmt.Fprintln(w, l)
	}
	if len(vals) > 0 {
		fmt.Fprintf(w, "%s: %% of each point's requests by %s\n", strings.Join(vals, ", "), header)
	}
	if len(slos) == 0 {
		return
	}
	exprs := make([]string, len(slos))
	for i, s := range slos {
		exprs[i] = s.Expr
	}
	fmt.Fprintf(w, "objectives, in this order: %s (✓ held, ✗ broken, each with its figure)\n", strings.Join(exprs, " · "))
}

// PastNote explains the "past" of a sweep's or a search's figure cell.
const PastNote = "past = a figure beyond any bound: the run stopped early, once the breach was certain, or had no data"

// cellFigure is Figure for a table's cell: an infinite figure is "past",
// which PastNote explains under the table.
func cellFigure(v float64, share bool) string {
	if math.IsInf(v, 0) {
		return "past"
	}
	return Figure(v, share)
}

// streamed reports whether any point streamed, and whether any counted
// goodput (ran with per-request objectives).
func streamed(points []result.FilePoint) (stream, goodput bool) {
	for _, p := range points {
		if s := p.Result.Stream; s != nil {
			stream = true
			goodput = goodput || s.Goodput != nil
		}
	}
	return stream, goodput
}

// streamRow is a streamed point's figures up to its errors column; "—"
// where the point has none (a point that did not stream, or counted no
// goodput).
func streamRow(p result.FilePoint, goodput bool, errs string) []string {
	r := p.Result
	row := []string{offered(p), fmt.Sprintf("%.1f", p.Completed())}
	s := r.Stream
	if goodput {
		g := "—"
		if s != nil && s.Goodput != nil {
			g = fmt.Sprintf("%.1f", s.Goodput.PerS)
		}
		row = append(row, g)
	}
	if s == nil {
		row = append(row, "—", ms1(r.Response.P50), ms1(r.Response.P99), ms1(r.Service.P99), "—", "—", "—", "—")
	} else {
		row = append(row, fmt.Sprintf("%.0f", s.TokensPerS), ms1(r.Response.P50), ms1(r.Response.P99), ms1(r.Service.P99),
			ms1(s.TTFTResponse.P99), ms1(s.ITL.P50), ms1(s.ITL.P99), ms1(s.TPOT.P50))
	}
	return append(row, ms1(r.SendDelay.P99), errs)
}

// offered is a row's first column: the offered rate, or what a profile's
// probe offered instead ("sync": one request at a time; "inf": all at
// once), which its note says in full.
func offered(p result.FilePoint) string {
	switch p.Kind {
	case "":
		return fmt.Sprintf("%g", p.Rate)
	case result.PointSynchronous:
		return "sync"
	}
	return "inf"
}

// note is a row's last column.
func note(p result.FilePoint, knee bool) string {
	var parts []string
	switch p.Kind {
	case result.PointSynchronous:
		parts = append(parts, "synchronous point: 1 user, closed loop")
	case result.PointThroughput:
		parts = append(parts, fmt.Sprintf("throughput probe: %d at once, ≤ %d in flight", p.Result.Counts.Scheduled, p.Result.Limit.Connections))
	}
	if knee {
		parts = append(parts, "← knee")
	}
	switch {
	case p.Stopped != "":
		parts = append(parts, "stopped early")
	case p.Result.Interrupted:
		// The user's stop cut the point short (a stop of the sweep's own
		// is Stopped): its figures are of the part that ran.
		parts = append(parts, fmt.Sprintf("INTERRUPTED (%d/%.0f scheduled)", p.Result.Counts.Scheduled, p.Result.Counts.Expected))
	}
	if !valid(p.Result) {
		parts = append(parts, "INVALID (a check failed)")
	}
	return strings.Join(parts, "; ")
}

// probeRuns are the runs of probe n (1-based) of a search file, in the
// order run.
func probeRuns(f *result.File, n int) []result.FilePoint {
	var runs []result.FilePoint
	for _, p := range f.Points {
		if p.Probe == n {
			runs = append(runs, p)
		}
	}
	return runs
}

// decidingShare reports whether the deciding objective of a probe is a
// share, as its runs' results stored it (or as its expression reads).
func decidingShare(expr string, runs []result.FilePoint) bool {
	for _, p := range runs {
		for _, s := range p.Result.SLOs {
			if s.Expr == expr {
				return s.Share
			}
		}
	}
	o, err := verify.ParseObjective(expr)
	return err == nil && o.Share
}

// SearchTable writes a search: every probe with its verdict, deciding
// figure and its spread; under the table, why each probe that breached
// did, in full (a why runs long: an early stop says what made the breach
// certain); then the answer.
func SearchTable(w io.Writer, f *result.File) error {
	s := f.Search
	if s == nil {
		return fmt.Errorf("a %s file holds no search", f.Kind)
	}
	align := tw.Alignment{tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight}
	head := []string{"probe", "rate/s", "verdicts", "deciding objective", "median", "min–max", "95 % bootstrap"}
	var rows [][]string
	type why struct {
		probe int
		rate  float64
		text  string
	}
	var whys []why
	past := false
	for i, p := range s.Probes {
		runs := probeRuns(f, i+1)
		var verdicts []string
		allNoData := len(runs) > 0
		for _, pt := range runs {
			v := "pass"
			nd := noData(pt)
			switch {
			case pt.Stopped != "":
				v = "stopped"
			case nd != nil:
				v = "no-data"
			case !pt.Pass:
				v = "breach"
			}
			allNoData = allNoData && nd != nil
			verdicts = append(verdicts, v)
		}
		verdict := "PASS"
		if !p.Pass {
			verdict = "BREACH"
		}
		shr := decidingShare(p.Deciding, runs)
		figs := make([]float64, len(p.Figures))
		for j, v := range p.Figures {
			figs[j] = result.DecodeFigure(v)
		}
		lo, hi := stats.MinMax(figs)
		med := result.DecodeFigure(p.Median)
		boot := "— (1 repeat)"
		if p.Lo != nil && p.Hi != nil {
			blo, bhi := result.DecodeFigure(*p.Lo), result.DecodeFigure(*p.Hi)
			boot = span(shr, blo, bhi)
			past = past || math.IsInf(blo, 0) || math.IsInf(bhi, 0)
		}
		medCell, spread := cellFigure(med, shr), span(shr, lo, hi)
		past = past || math.IsInf(med, 0) || math.IsInf(lo, 0) || math.IsInf(hi, 0)
		if allNoData {
			medCell, spread = "no data", "no data"
		}
		if p.Why != "" {
			whys = append(whys, why{i + 1, p.Rate, p.Why})
		}
		rows = append(rows, []string{fmt.Sprint(i + 1), fmt.Sprintf("%g", p.Rate), verdict + " (" + strings.Join(verdicts, " ") + ")",
			p.Deciding, medCell, spread, boot})
	}
	// Too wide, the probes' figures go in a second table by probe.
	if err := fitTables(w, align, head, rows, slices.Index(head, "median")); err != nil {
		return err
	}
	if past {
		fmt.Fprintln(w, PastNote)
	}
	if len(whys) > 0 {
		names := make([]string, len(whys))
		width := 0
		for i, y := range whys {
			names[i] = fmt.Sprintf("probe %d (%g/s)", y.probe, y.rate)
			width = max(width, len(names[i]))
		}
		fmt.Fprintln(w, "\nwhy")
		for i, y := range whys {
			indent := 2 + width + 2
			for j, line := range wrap(y.text, max(whyWidth-indent, 40)) {
				name := names[i]
				if j > 0 {
					name = ""
				}
				fmt.Fprintf(w, "  %-*s  %s\n", width, name, line)
			}
		}
	}
	_, err := fmt.Fprintf(w, "\nsearch: %s\n", s.Message)
	return err
}

// whyWidth is the width a search's whys are wrapped to, and legendWidth
// that of the lines above a sweep's table: about the tables' own.
const (
	whyWidth    = TableWidth
	legendWidth = TableWidth
)

// span writes a range of figures, once when both ends are the same, and
// with the unit once when both ends are figures ("52.863 – 53.023 ms").
func span(share bool, lo, hi float64) string {
	switch {
	case lo == hi:
		return cellFigure(lo, share)
	case math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return cellFigure(lo, share) + " – " + cellFigure(hi, share)
	case share:
		return fmt.Sprintf("%.3g – %s", 100*lo, Figure(hi, share))
	}
	return fmt.Sprintf("%.3f – %s", lo, Figure(hi, share))
}

// spreadFigures are the headline figures Spread summarises.
var spreadFigures = []struct {
	name string
	get  func(p result.FilePoint) float64
}{
	{"completed/s", result.FilePoint.Completed},
	{"response p50 (ms)", func(p result.FilePoint) float64 { return p.Result.Response.P50 }},
	{"response p90 (ms)", func(p result.FilePoint) float64 { return p.Result.Response.P90 }},
	{"response p99 (ms)", func(p result.FilePoint) float64 { return p.Result.Response.P99 }},
	{"response max (ms)", func(p result.FilePoint) float64 { return p.Result.Response.Max }},
	{"service p99 (ms)", func(p result.FilePoint) float64 { return p.Result.Service.P99 }},
	{"send delay p99 (ms)", func(p result.FilePoint) float64 { return p.Result.SendDelay.P99 }},
	{"errors (%)", func(p result.FilePoint) float64 {
		c := p.Result.Headline()
		return 100 * float64(c.Errors+c.Timeouts+c.Unfinished) / math.Max(float64(c.Scheduled), 1)
	}},
}

// Spread writes the median and spread of each headline figure over
// repeated runs of one rate: min–max and the 95 % bootstrap interval of
// the median.
func Spread(w io.Writer, points []result.FilePoint) error {
	t := newTable(w, leftFirst(5), fmt.Sprintf("over %d runs", len(points)), "median", "min", "max", "95 % bootstrap of the median")
	for _, f := range spreadFigures {
		xs := make([]float64, len(points))
		for i, p := range points {
			xs[i] = f.get(p)
		}
		lo, hi := stats.MinMax(xs)
		blo, bhi := stats.Bootstrap(xs)
		boot := "—"
		if !math.IsNaN(blo) {
			boot = fmt.Sprintf("%.3f – %.3f", blo, bhi)
		}
		if err := t.Append([]string{f.name, fmt.Sprintf("%.3f", stats.Median(xs)), fmt.Sprintf("%.3f", lo), fmt.Sprintf("%.3f", hi), boot}); err != nil {
			return err
		}
	}
	return t.Render()
}

// openPoints are a sweep's points at an offered rate, without a profile's
// probes (which have none to draw against), and knee's index among them.
func openPoints(points []result.FilePoint, knee int) ([]result.FilePoint, int) {
	if !slices.ContainsFunc(points, func(p result.FilePoint) bool { return !p.Open() }) {
		return points, knee
	}
	var out []result.FilePoint
	at := -1
	for i, p := range points {
		if p.Open() {
			if i == knee {
				at = len(out)
			}
			out = append(out, p)
		}
	}
	return out, at
}

// ChartPoints are the points a file's charts draw, and the index of the
// knee among them (-1: none): a sweep's every point; of a search, one run
// per probe, in increasing rate, the one of median response p99 (the
// upper middle of an even number); none of repeats, all at one rate.
func ChartPoints(f *result.File) ([]result.FilePoint, int) {
	switch f.Kind {
	case result.KindSweep:
		return openPoints(f.Points, kneeIndex(f))
	case result.KindSearch:
		if f.Search == nil {
			return nil, -1
		}
		var points []result.FilePoint
		for i := range f.Search.Probes {
			runs := probeRuns(f, i+1)
			slices.SortFunc(runs, func(a, b result.FilePoint) int { return cmp.Compare(a.Result.Response.P99, b.Result.Response.P99) })
			if len(runs) > 0 {
				points = append(points, runs[len(runs)/2])
			}
		}
		slices.SortStableFunc(points, func(a, b result.FilePoint) int { return cmp.Compare(a.Rate, b.Rate) })
		return points, -1
	}
	return nil, -1
}
