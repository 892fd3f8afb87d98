package sweep

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

func ms(v float64) string { return fmt.Sprintf("%.1f", v) }

// classValues are the values of the first class header any point saw, at
// most three, by their count over the sweep.
func classValues(points []Point) (string, []string) {
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

func share(res *result.Result, value string) string {
	if len(res.Classes) == 0 {
		return "—"
	}
	for _, v := range res.Classes[0].Values {
		if v.Value == value {
			return fmt.Sprintf("%.1f %%", 100*v.Share)
		}
	}
	return "0 %"
}

// WriteTable writes one row per point: offered rate, completed per
// second, response p50/p90/p99, service p99, send delay p99, errors, class
// shares, each objective's verdict, and a note (the knee, an early stop, a
// failed check). knee < 0: none.
//
// When the points streamed (their results have a Stream section) the
// table trades response p90 for the stream's figures: goodput per second
// next to completed per second (with --slo-request), output tokens per
// second, TTFT p99 from the schedule, ITL p50 and p99, TPOT p50. These
// are what grow with a batching server's occupancy.
func WriteTable(w io.Writer, points []Point, knee int) error {
	if len(points) == 0 {
		return nil
	}
	header, vals := classValues(points)
	stream, goodput := streamed(points)
	var head []string
	switch {
	case stream && goodput:
		head = []string{"offered/s", "completed/s", "goodput/s", "tokens/s", "resp p50", "resp p99", "serv p99", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50", "send delay p99", "errors"}
	case stream:
		head = []string{"offered/s", "completed/s", "tokens/s", "resp p50", "resp p99", "serv p99", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50", "send delay p99", "errors"}
	default:
		head = []string{"offered/s", "completed/s", "resp p50", "resp p90", "resp p99", "serv p99", "send delay p99", "errors"}
	}
	for _, v := range vals {
		head = append(head, header+"="+v)
	}
	for _, s := range points[0].SLOs {
		head = append(head, s.Objective.Expr)
	}
	head = append(head, "note")
	align := make(tw.Alignment, len(head))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[len(align)-1] = tw.AlignLeft
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(align),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header(head)
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
			row = []string{fmt.Sprintf("%g", p.Rate), fmt.Sprintf("%.1f", p.Completed()),
				ms(r.Response.P50), ms(r.Response.P90), ms(r.Response.P99), ms(r.Service.P99), ms(r.SendDelay.P99), errs}
		}
		for _, v := range vals {
			row = append(row, share(r, v))
		}
		for _, s := range p.SLOs {
			mark := "✓"
			if !s.Pass {
				mark = "✗"
			}
			fig := Format(s.Objective, s.Measured)
			if s.NoData {
				fig = "no data"
			}
			row = append(row, mark+" "+fig)
		}
		row = append(row, note(p, i == knee))
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// streamed reports whether any point streamed, and whether any counted
// goodput (ran with per-request objectives).
func streamed(points []Point) (stream, goodput bool) {
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
func streamRow(p Point, goodput bool, errs string) []string {
	r := p.Result
	row := []string{fmt.Sprintf("%g", p.Rate), fmt.Sprintf("%.1f", p.Completed())}
	s := r.Stream
	if goodput {
		g := "—"
		if s != nil && s.Goodput != nil {
			g = fmt.Sprintf("%.1f", s.Goodput.PerS)
		}
		row = append(row, g)
	}
	if s == nil {
		row = append(row, "—", ms(r.Response.P50), ms(r.Response.P99), ms(r.Service.P99), "—", "—", "—", "—")
	} else {
		row = append(row, fmt.Sprintf("%.0f", s.TokensPerS), ms(r.Response.P50), ms(r.Response.P99), ms(r.Service.P99),
			ms(s.TTFTResponse.P99), ms(s.ITL.P50), ms(s.ITL.P99), ms(s.TPOT.P50))
	}
	return append(row, ms(r.SendDelay.P99), errs)
}

// note is a row's last column.
func note(p Point, knee bool) string {
	var parts []string
	if knee {
		parts = append(parts, "← knee")
	}
	if p.Stopped != "" {
		parts = append(parts, "stopped early")
	}
	if !p.Valid {
		parts = append(parts, "a check FAILED: not a valid measurement")
	}
	return strings.Join(parts, "; ")
}

// WriteSearch writes a search: every probe with its verdict, deciding
// figure and its spread, then the answer.
func WriteSearch(w io.Writer, s *Search) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header("probe", "rate/s", "verdicts", "deciding objective", "median", "min–max", "95 % bootstrap", "why")
	for i, p := range s.Probes {
		var verdicts []string
		for _, pt := range p.Points {
			v := "pass"
			switch {
			case pt.Stopped != "":
				v = "stopped"
			case pt.NoData() != nil:
				v = "no-data"
			case !pt.Pass():
				v = "breach"
			}
			verdicts = append(verdicts, v)
		}
		verdict := "PASS"
		if !p.Pass {
			verdict = "BREACH"
		}
		lo, hi := minMax(p.Figures)
		boot := "— (1 repeat)"
		if !math.IsNaN(p.Lo) {
			boot = span(p.Deciding, p.Lo, p.Hi)
		}
		why := p.Why
		if r := []rune(why); len(r) > 100 {
			why = string(r[:99]) + "…"
		}
		med, spread := Format(p.Deciding, p.Median), span(p.Deciding, lo, hi)
		if p.noData() != nil {
			med, spread = "no data", "no data"
		}
		if err := t.Append([]string{fmt.Sprint(i + 1), fmt.Sprintf("%g", p.Rate), verdict + " (" + strings.Join(verdicts, " ") + ")",
			p.Deciding.Expr, med, spread, boot, why}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nsearch: %s\n", s.Message)
	return err
}

// span writes a range of figures, once when both ends are the same.
func span(o verify.Objective, lo, hi float64) string {
	if lo == hi {
		return Format(o, lo)
	}
	return Format(o, lo) + " – " + Format(o, hi)
}

func minMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

// spreadFigures are the headline figures WriteSpread summarises.
var spreadFigures = []struct {
	name string
	get  func(p Point) float64
}{
	{"completed/s", Point.Completed},
	{"response p50 (ms)", func(p Point) float64 { return p.Result.Response.P50 }},
	{"response p90 (ms)", func(p Point) float64 { return p.Result.Response.P90 }},
	{"response p99 (ms)", func(p Point) float64 { return p.Result.Response.P99 }},
	{"response max (ms)", func(p Point) float64 { return p.Result.Response.Max }},
	{"service p99 (ms)", func(p Point) float64 { return p.Result.Service.P99 }},
	{"send delay p99 (ms)", func(p Point) float64 { return p.Result.SendDelay.P99 }},
	{"errors (%)", func(p Point) float64 {
		c := p.Result.Headline()
		return 100 * float64(c.Errors+c.Timeouts+c.Unfinished) / math.Max(float64(c.Scheduled), 1)
	}},
}

// WriteSpread writes the median and spread of each headline figure over
// repeated runs of one rate: min–max and the 95 % bootstrap interval of
// the median.
func WriteSpread(w io.Writer, points []Point) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header(fmt.Sprintf("over %d runs", len(points)), "median", "min", "max", "95 % bootstrap of the median")
	for _, f := range spreadFigures {
		xs := make([]float64, len(points))
		for i, p := range points {
			xs[i] = f.get(p)
		}
		lo, hi := minMax(xs)
		blo, bhi := bootstrap(xs)
		boot := "—"
		if !math.IsNaN(blo) {
			boot = fmt.Sprintf("%.3f – %.3f", blo, bhi)
		}
		if err := t.Append([]string{f.name, fmt.Sprintf("%.3f", median(xs)), fmt.Sprintf("%.3f", lo), fmt.Sprintf("%.3f", hi), boot}); err != nil {
			return err
		}
	}
	return t.Render()
}
