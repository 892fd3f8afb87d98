// Package report renders a run's result for people: the latency table
// (response time, service time and send delay side by side, and the
// coordinated-omission-corrected row of a paced closed run), the counts
// line, the achieved rate, status codes, errors and the checks. diff.go
// sets two histograms side by side, percentile by percentile; hgrm.go writes
// HdrHistogram's percentile distribution text and an interval log's table;
// session.go a session run's steps, its turns' stream figures and its
// sessions.
// sweep.go renders a sweep, a search and repeats from their sweep file
// (result.File), live or saved alike; csv.go writes CSV; html.go picks the
// charts internal/plot draws and the pages they sit on; fit.go keeps a
// terminal's report within its 100 columns. It is the one
// place openload renders: internal/sweep runs and decides, cmd/ writes the
// files.
package report

import (
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"

	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Row is one line of a latency table.
type Row struct {
	Name string
	P    result.Percentiles
}

// Columns of the latency table, in ms.
var Columns = []string{"p50", "p90", "p95", "p99", "p99.9", "max", "mean"}

// LatencyTable writes rows as a table with the standard columns; too
// wide for a terminal (seconds-long latencies, a long row name), as two:
// p50 to p99, then p99.9, max and mean.
func LatencyTable(w io.Writer, rows []Row) error {
	cells := make([][]string, len(rows))
	for i, r := range rows {
		p := r.P
		cells[i] = []string{r.Name, ms(p.P50), ms(p.P90), ms(p.P95), ms(p.P99), ms(p.P999), ms(p.Max), ms(p.Mean)}
	}
	return fitTables(w, leftFirst(8), append([]string{"ms"}, Columns...), cells, 1+slices.Index(Columns, "p99.9"))
}

// ClassTable writes one class header's breakdown: count, share of all
// scheduled requests and response-time percentiles per value, and, when
// the table holds the value "none" (recorder.NoEvent), each other value
// per 100 of the rest.
func ClassTable(w io.Writer, ct result.ClassTable) error {
	rest := slices.ContainsFunc(ct.Values, func(v result.ClassValue) bool { return v.Per100Rest > 0 })
	head := []string{"value", "count", "share"}
	if rest {
		head = append(head, "per 100 of the rest")
	}
	cut := len(head)
	head = append(head, "resp p50", "resp p95", "resp p99", "resp max")
	var rows [][]string
	for _, v := range ct.Values {
		p := v.Response
		row := []string{v.Value, fmt.Sprint(v.Count), fmt.Sprintf("%.1f %%", 100*v.Share)}
		if rest {
			row = append(row, per100(v))
		}
		rows = append(rows, append(row, ms(p.P50), ms(p.P95), ms(p.P99), ms(p.Max)))
	}
	// A long value (a header's free text) may need its latencies apart.
	return fitTables(w, leftFirst(len(head)), head, rows, cut)
}

func ms(v float64) string { return fmt.Sprintf("%.3f", v) }

// CountsLine is the accounting in one line, with a mark saying whether the
// identity completed + errors + timeouts + unfinished == scheduled holds.
// A closed run's slots that no user took show as "never sent".
func CountsLine(c result.Counts) string { return countsLine(c, true) }

func countsLine(c result.Counts, expectedKnown bool) string {
	mark := "✓ every request accounted for"
	if !c.Balanced() {
		mark = fmt.Sprintf("✗ %d requests unaccounted for", c.Scheduled-(c.Completed+c.Errors+c.Timeouts+c.Unfinished))
	}
	expected := "expected " + count(c.Expected)
	if !expectedKnown {
		expected = "expected unknown (closed loop without a rate)"
	}
	never := ""
	if c.Skipped > 0 {
		never = fmt.Sprintf(" · never sent %d", c.Skipped)
	}
	return fmt.Sprintf("%s · scheduled %d%s · sent %d · completed %d · errors %d · timeouts %d · unfinished %d   %s",
		expected, c.Scheduled, never, c.Sent, c.Completed, c.Errors, c.Timeouts, c.Unfinished, mark)
}

// CorrectedName labels the corrected row with the interval it assumed.
func CorrectedName(c *result.Corrected) string {
	return fmt.Sprintf("corrected (%s)", c.Interval)
}

func count(x float64) string {
	if x == float64(int64(x)) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.1f", x)
}

// autoNote marks the heading of a table openload showed without being
// asked (recorder.Config.AutoHeaders).
func autoNote(auto bool) string {
	if auto {
		return " · shown because responses carried it"
	}
	return ""
}

// legends are the legend lines a report has said: a run of scenarios
// says one under the first of its scenarios' tables that needs it, not
// under each (issue 55: a mix's legend printed twice).
type legends map[string]bool

// say writes line unless it was said.
func (l legends) say(w io.Writer, line string) {
	if !l[line] {
		l[line] = true
		fmt.Fprintln(w, line)
	}
}

// ServerTimingStreamNote is the line under the Server-Timing table of a
// run that streamed. openload reads Server-Timing from the response head,
// which a server writes before it streams the body: its figures stop at
// the head (the stub's total is arrival to the first token), so next to
// service time, which runs to the last token, they look far too small.
// TTFT from the send is the client's figure that stops about there.
const ServerTimingStreamNote = "streamed: the server's Server-Timing header came with the response head, so it covers the time to the head, not the stream that followed; compare it with client TTFT from send, not with service time"

// RequestLine says what openload made of the request bodies (an added
// Content-Type, the model, generated prompts); "" when nothing.
func RequestLine(q *result.Request) string {
	if q == nil {
		return ""
	}
	var parts []string
	if q.ContentType != "" {
		parts = append(parts, "Content-Type: "+q.ContentType+" added (the body is JSON)")
	}
	switch {
	case q.Model != "" && q.ModelFrom != "":
		parts = append(parts, fmt.Sprintf("model %q, the first of GET %s", q.Model, q.ModelFrom))
	case q.Model != "":
		parts = append(parts, fmt.Sprintf("model %q", q.Model))
	}
	if q.Prompts != "" {
		parts = append(parts, q.Prompts)
	}
	if q.Targets != "" {
		parts = append(parts, q.Targets)
	}
	if len(parts) == 0 {
		return ""
	}
	return "request: " + strings.Join(parts, " · ")
}

// Text writes the full terminal report of res, each line whole
// (TextWrapped wraps them for a terminal).
func Text(w io.Writer, res *result.Result) error { return TextWrapped(w, res, 0) }

// TextWrapped writes the full terminal report of res for a terminal of
// wrapAt columns (LineWidth): each line wider wrapped at spaces, a
// check's and an objective's reason under its text; 0: not wrapped, one
// line each, as a file or pipe gets it so that a line found by grep is
// whole. Its tables fit TableWidth either way (fitTables).
func TextWrapped(w io.Writer, res *result.Result, wrapAt int) error {
	if wrapAt <= 0 {
		return text(w, res, 0)
	}
	lw := NewLineWrapper(w, wrapAt)
	err := text(lw, res, wrapAt)
	if ferr := lw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// text writes the report's sections in their order.
func text(w io.Writer, res *result.Result, wrapAt int) error {
	headLines(w, res)
	for _, section := range []func(io.Writer, *result.Result) error{
		latencySection, serverTimingSection, StreamLines, dwellSection, ScenarioTable,
		classSections, targetSection, ScenarioTargets, SessionRuns,
	} {
		if err := section(w, res); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	countLines(w, res)
	rateLine(w, res)
	answerLines(w, res)
	WireLines(w, res)  // wire.go
	RetryLines(w, res) // retry.go
	limitLines(w, res)
	lazyLines(w, wrapAt, res) // lazy.go
	checkLines(w, wrapAt, res.Checks)
	objectives(w, wrapAt, res.SLOs)
	return nil
}

// headLines are the report's headline: the schedule and what it sent,
// the built-in stub, the limits and the request's line.
func headLines(w io.Writer, res *result.Result) {
	cfg := res.Config
	what := res.Sends()
	if len(res.Steps) > 0 {
		// A session run: its requests are its steps'.
		what = fmt.Sprintf("sessions of %d steps (%s) at %s", len(res.Steps), strings.Join(result.PartNames(res.Steps), " → "), cfg.Target)
	}
	fmt.Fprintf(w, "openload · %s · %s\n", cfg.Schedule, what)
	if cfg.BuiltinStub != "" {
		fmt.Fprintln(w, StubLine(cfg))
	}
	limits := fmt.Sprintf("connections ≤ %d", cfg.Connections)
	if q := cfg.Request; q != nil && q.Connections != "" {
		limits += " (" + q.Connections + ")"
	}
	if res.Closed() {
		limits = fmt.Sprintf("closed loop: %s, each sends, waits for its response, sends again", users(cfg.Users))
		if cfg.Think != "" {
			limits += " after " + cfg.Think
		}
	}
	client := ""
	if cfg.Client != "" {
		client = " · client " + cfg.Client
	}
	fmt.Fprintf(w, "%s · timeout %s · drain %s%s · started %s\n",
		limits, cfg.Timeout, cfg.Drain, client, res.Started.UTC().Format("2006-01-02T15:04:05Z"))
	if line := RequestLine(cfg.Request); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
}

// latencySection is the latency table and the lines saying what its
// rows hold.
func latencySection(w io.Writer, res *result.Result) error {
	rows := headRows(res) // target.go
	if res.Corrected != nil {
		rows = append(rows, Row{CorrectedName(res.Corrected), res.Corrected.Percentiles})
	}
	if err := LatencyTable(w, rows); err != nil {
		return err
	}
	fmt.Fprintln(w, "response = done − scheduled (what users waited) · service = done − sent (what closed-loop tools report) · send delay = sent − scheduled")
	answerNote(w, res)
	if res.Retries != nil {
		fmt.Fprintln(w, RetryNote)
	}
	if res.Closed() {
		if res.ExpectedKnown() {
			fmt.Fprintln(w, "closed loop: a request's scheduled time is its user's pacing slot; the slots a user missed while it waited were never sent and are in no row but corrected")
		} else {
			fmt.Fprintln(w, "closed loop without a rate: a request's scheduled time is the moment its user was ready, so response time cannot show waiting before the send")
		}
	}
	if c := res.Corrected; c != nil {
		fmt.Fprintf(w, "corrected = response time with HdrHistogram's coordinated-omission correction (RecordCorrectedValue), assuming one request every %s per user (evenly spaced arrivals): %d values for the %s requests rate × duration calls for\n",
			c.Interval, c.Count, count(res.Counts.Expected))
	}
	if res.Censored > 0 {
		fmt.Fprintf(w, "%d timed-out or unfinished requests are counted at their elapsed time (a lower bound)\n", res.Censored)
	}
	return nil
}

// serverTimingSection sets the server's Server-Timing figures beside the
// client's service time (and TTFT from the send, when it streamed).
func serverTimingSection(w io.Writer, res *result.Result) error {
	if len(res.ServerTiming) == 0 {
		return nil
	}
	streamed := res.Stream != nil && res.Stream.TTFTService.Count > 0
	next := "the client's service time"
	if streamed {
		next += " and TTFT from the send"
	}
	fmt.Fprintf(w, "\nserver-reported (Server-Timing) next to %s%s\n", next, autoNote(slices.Contains(res.Config.AutoHeaders, "Server-Timing")))
	rows := []Row{{"client service", res.Service}}
	if streamed {
		rows = append(rows, Row{"client send TTFT", res.Stream.TTFTService})
	}
	for _, m := range res.ServerTiming {
		rows = append(rows, Row{"server " + m.Name, m.Percentiles})
	}
	if err := LatencyTable(w, rows); err != nil {
		return err
	}
	if streamed {
		fmt.Fprintln(w, ServerTimingStreamNote)
	}
	return nil
}

func dwellSection(w io.Writer, res *result.Result) error {
	if res.DwellBound != nil {
		fmt.Fprintln(w, DwellLine(res.DwellBound))
	}
	return nil
}

// classSections are a table for each class header, with its values'
// counts by second.
func classSections(w io.Writer, res *result.Result) error {
	for _, ct := range res.Classes {
		fmt.Fprintf(w, "\nby %s%s\n", ct.Header, autoNote(ct.Auto))
		if err := ClassTable(w, ct); err != nil {
			return err
		}
		if err := ClassSeconds(w, res, ct); err != nil { // classsec.go
			return err
		}
	}
	return nil
}

// targetSection is a mix's table by target.
func targetSection(w io.Writer, res *result.Result) error {
	if len(res.Targets) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nby target")
	if err := PartTable(w, "target", res.Headline().Scheduled, res.Targets); err != nil { // part.go
		return err
	}
	fmt.Fprintln(w, partErrorsNote("target"))
	return nil
}

// countLines are the requests' accounting and the warm-up's.
func countLines(w io.Writer, res *result.Result) {
	fmt.Fprintf(w, "counts   %s\n", countsLine(res.Counts, res.ExpectedKnown()))
	if wu := res.Warmup; wu != nil {
		fmt.Fprintf(w, "warmup   first %s: scheduled %d · completed %d · errors %d · timeouts %d · unfinished %d · response p50 %s p99 %s ms · service p99 %s ms: counted above, kept out of the percentiles and objectives\n",
			wu.Until, wu.Scheduled, wu.Completed, wu.Errors, wu.Timeouts, wu.Unfinished, ms(wu.Response.P50), ms(wu.Response.P99), ms(wu.Service.P99))
	}
}

// rateLine is the rate sent next to the one the schedule asked for.
func rateLine(w io.Writer, res *result.Result) {
	switch {
	case !res.Closed() && shardShare(res.Config.Shard):
		fmt.Fprintf(w, "rate     sent %.1f/s (%s) · run took %.2f s\n", res.SendRate, shardRate(res), res.Elapsed)
	case res.Sessions != nil && !res.Closed():
		// The schedule's rate is the sessions'; the requests are their
		// steps, several to a session.
		fmt.Fprintf(w, "rate     sent %.1f/s, the sessions' steps (sessions %s) · run took %.2f s\n", res.SendRate, SessionRate(res), res.Elapsed)
	case res.Config.Arrival == schedule.AtOnce && !res.Closed():
		// The probe's rate is what the server answered: there is no
		// schedule's rate to send at.
		fmt.Fprintf(w, "rate     all %d at once (rate inf), bounded by %d connections · completed %s/s · run took %.2f s\n", res.Counts.Scheduled, res.Limit.Connections, count(completedRate(res)), res.Elapsed)
	case res.Config.Stages != "":
		fmt.Fprintf(w, "rate     sent %.1f/s (scheduled ∫λ dt ÷ duration = %s/s, stages %s) · run took %.2f s\n", res.SendRate, count(meanRate(res)), res.Config.Stages, res.Elapsed)
	case !res.Closed():
		fmt.Fprintf(w, "rate     sent %.1f/s (scheduled %s/s) · run took %.2f s\n", res.SendRate, count(res.Config.Rate), res.Elapsed)
	case res.ExpectedKnown():
		fmt.Fprintf(w, "rate     sent %.1f/s (users paced to %s/s) · run took %.2f s\n", res.SendRate, count(res.Config.Rate), res.Elapsed)
	default:
		fmt.Fprintf(w, "rate     sent %.1f/s (closed loop, unpaced) · run took %.2f s\n", res.SendRate, res.Elapsed)
	}
}

// answerLines are what the requests got: statuses, gRPC codes, the first
// refusal's words, errors by kind and TLS failures by cause.
func answerLines(w io.Writer, res *result.Result) {
	if len(res.Status) > 0 {
		fmt.Fprintf(w, "status   %s\n", statusLine(res.Status))
	}
	if len(res.GRPC) > 0 { // a gRPC run's calls by grpc-status (result.GRPC)
		fmt.Fprintf(w, "grpc     %s\n", statusLine(res.GRPC))
	}
	if q := RefusalQuote(res.Refusal); q != "" {
		who := strconv.Itoa(res.Refusal.Status)
		if res.Refusal.Status == 200 && len(res.GRPC) > 0 {
			who = "gRPC refusal" // its grpc-message (engine's keepGRPC)
		}
		fmt.Fprintf(w, "         the first %s said: %s\n", who, q)
	}
	if len(res.ErrorKinds) > 0 {
		fmt.Fprintf(w, "errors   %s\n", statusLine(res.ErrorKinds))
	}
	if l := tlsLine(res); l != "" {
		fmt.Fprintf(w, "tls      %s\n", l)
	}
}

// limitLines are the generator's bounds: users or connections, the
// connections opened before the start, shards, HTTP/2's streams and a
// stop before the end.
func limitLines(w io.Writer, res *result.Result) {
	cfg, l := res.Config, res.Limit
	if res.Closed() {
		fmt.Fprintf(w, "users    %s in a closed loop, one request in flight each: max in flight %d\n", users(cfg.Users), l.MaxInFlight)
	} else if l.Waited > 0 {
		fmt.Fprintf(w, "limit    BOUND: %d requests waited for one of %d connections (in send delay); max in flight %d\n", l.Waited, l.Connections, l.MaxInFlight)
	} else {
		fmt.Fprintf(w, "limit    not reached: max in flight %d of %d connections\n", l.MaxInFlight, l.Connections)
	}
	if p := l.Predial; p != nil {
		fmt.Fprintln(w, PredialLine(p))
	}
	ShardLines(w, res) // shard.go
	if p := cfg.Protocol; p == "h2" || p == "h2c" {
		per := "the server's limit of streams per connection"
		if cfg.MaxStreams > 0 {
			per = fmt.Sprintf("at most %d streams per connection", cfg.MaxStreams)
		}
		fmt.Fprintf(w, "protocol %s (HTTP/2): the limit counts streams in flight over all connections, %s\n", p, per)
	} else if p == result.ProtocolMixed {
		var by []string
		for _, sc := range res.Scenarios {
			by = append(by, sc.Name+": "+sc.Result.Config.Protocol)
		}
		fmt.Fprintf(w, "protocol by scenario: %s\n", strings.Join(by, ", "))
	}
	if res.Interrupted {
		never := int64(res.Counts.Expected) - res.Counts.Scheduled - res.Counts.Skipped
		fmt.Fprintf(w, "run      INTERRUPTED: %d requests scheduled before the stop (all accounted for above), %d never scheduled\n", res.Counts.Scheduled, max(never, 0))
	}
}

// checkLines writes a line to each check, its reason wrapped to width (0:
// not wrapped) under the reason's start.
func checkLines(w io.Writer, width int, checks []result.Check) {
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "\nchecks")
	names := 0
	for _, c := range checks {
		names = max(names, len(c.Name))
	}
	for _, c := range checks {
		wrapped(w, width, fmt.Sprintf("  %-4s  %-*s  ", strings.ToUpper(c.Severity), names, c.Name), c.Message)
	}
}

// Objectives writes one line per evaluated objective (nothing when none).
func Objectives(w io.Writer, slos []result.SLO) { objectives(w, 0, slos) }

// objectives writes Objectives, each wrapped to width (0: not wrapped).
func objectives(w io.Writer, width int, slos []result.SLO) {
	if len(slos) == 0 {
		return
	}
	fmt.Fprintln(w, "\nobjectives")
	for _, s := range slos {
		mark := "PASS"
		if !s.Pass {
			mark = "FAIL"
		}
		wrapped(w, width, "  "+mark+"  ", s.Message)
	}
}

// LineWidth is the width a report's long lines are wrapped to on a
// terminal: a check's reason, an objective's message. A terminal is
// often no wider.
const LineWidth = 100

// wrapped writes text after lead, wrapped at spaces to width, each
// further line indented under the first's text (never narrower than 40
// columns of text); width 0 writes it on one line.
func wrapped(w io.Writer, width int, lead, text string) {
	if width <= 0 {
		fmt.Fprintln(w, lead+text)
		return
	}
	indent := utf8.RuneCountInString(lead)
	for i, l := range wrap(text, max(width-indent, 40)) {
		if i > 0 {
			lead = strings.Repeat(" ", indent)
		}
		fmt.Fprintln(w, lead+l)
	}
}

func users(n int) string {
	if n == 1 {
		return "1 user"
	}
	return fmt.Sprintf("%d users", n)
}

// Verdict summarises the checks in one line: "ok", "ok with 2 warnings" or
// "INVALID: 1 check failed".
func Verdict(checks []result.Check) string {
	var warn, fail []string
	for _, c := range checks {
		switch c.Severity {
		case "warn":
			warn = append(warn, c.Name)
		case "fail":
			fail = append(fail, c.Name)
		}
	}
	sort.Strings(warn)
	switch {
	case len(fail) > 0:
		return fmt.Sprintf("INVALID measurement: %d check(s) failed (%s)", len(fail), strings.Join(fail, ", "))
	case len(warn) > 0:
		return fmt.Sprintf("valid, with %d warning(s) (%s)", len(warn), strings.Join(warn, ", "))
	}
	return "valid: every check passed"
}

// PredialLine says what the generator opened before the schedule's clock
// started (recorder.Predial).
func PredialLine(p *result.Predial) string {
	line := fmt.Sprintf("predial  %d of %d connections opened before the schedule started (%.1f ms); scheduled times count from after", p.Opened, p.Wanted, p.Ms)
	if p.Error != "" {
		line += fmt.Sprintf("; dialling stopped at %q, the requests dialled on their own", p.Error)
	}
	return line
}

// StubLine describes the built-in stub target of cfg and says whether its
// work is in the generator's figures.
func StubLine(cfg result.Config) string {
	if cfg.StubChild {
		cpu := ""
		if cfg.StubCPUSeconds > 0 {
			cpu = fmt.Sprintf("; it used %.2f s CPU", cfg.StubCPUSeconds)
		}
		return fmt.Sprintf("target: built-in stub model server in a child process (%s%s), apart from the generator's figures", cfg.BuiltinStub, cpu)
	}
	return fmt.Sprintf("target: built-in stub model server in openload's process (%s): its work is in the generator's figures", cfg.BuiltinStub)
}

// meanRate is a staged run's scheduled mean rate: ∫λ dt over its duration.
func meanRate(res *result.Result) float64 {
	d, err := time.ParseDuration(res.Config.Duration)
	if err != nil || d <= 0 {
		return 0
	}
	return res.Counts.Expected / d.Seconds()
}

// newTable is a table of openload's reports: headers as given, aligned
// right, cells aligned by align.
func newTable(w io.Writer, align tw.Alignment, head ...string) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(align),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header(head)
	return t
}

// leftFirst aligns n columns: the first left, the others right.
func leftFirst(n int) tw.Alignment {
	a := make(tw.Alignment, n)
	for i := range a {
		a[i] = tw.AlignRight
	}
	a[0] = tw.AlignLeft
	return a
}

// completedRate is the requests completed per second of the run: a
// throughput probe's measure of the server.
func completedRate(res *result.Result) float64 {
	if res.Elapsed <= 0 {
		return 0
	}
	return float64(res.Counts.Completed) / res.Elapsed
}
