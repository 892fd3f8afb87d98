// Package verify checks a recorded run and returns findings; it never prints
// and never decides an exit code. A finding is pass, warn or fail: fail means
// the measurement itself cannot be trusted (requests unaccounted for, the
// schedule not produced, seconds of the run missing), warn means it is valid
// but says something the user must read (the generator fell behind, the
// connection limit bound, requests failed).
//
// A closed-loop run (Config.Mode closed) is checked as what it is: a
// demonstration of what a closed-loop tool reports. The requests its users
// never sent because they were waiting are reported (warn), not failed, and
// the seconds they left empty are listed.
package verify

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// Severity of a finding.
type Severity string

// Severities, from best to worst.
const (
	Pass Severity = "pass"
	Warn Severity = "warn"
	Fail Severity = "fail"
)

// Finding is the outcome of one check.
type Finding struct {
	Check    string
	Severity Severity
	Message  string
}

// Options tune the checks.
type Options struct {
	// SendDelayP99 is the send-delay p99 above which the generator is said to
	// have fallen behind. Zero means DefaultSendDelayP99.
	SendDelayP99 time.Duration
	// DipRatio flags a second whose sends fall below this share of its
	// scheduled count (with at least DipMin scheduled). Zero means 0.9.
	DipRatio float64
	DipMin   int64
}

// DefaultSendDelayP99 is the default send-delay budget.
const DefaultSendDelayP99 = time.Millisecond

// Validate checks the options; a zero value means its default. Its errors
// are *field.Error, naming the fields of Options.
func (o Options) Validate() error {
	switch {
	case o.SendDelayP99 < 0:
		return field.Errorf("SendDelayP99", o.SendDelayP99, "{SendDelayP99} must be > 0, got %v", o.SendDelayP99)
	case math.IsNaN(o.DipRatio) || o.DipRatio < 0 || o.DipRatio > 1:
		return field.Errorf("DipRatio", o.DipRatio, "{DipRatio} must be between 0 and 1, got %v", o.DipRatio)
	case o.DipMin < 0:
		return field.Errorf("DipMin", o.DipMin, "{DipMin} must be ≥ 0, got %d", o.DipMin)
	}
	return nil
}

// Run checks res and returns its findings in a fixed order.
func Run(res *result.Result, opt Options) []Finding {
	if opt.SendDelayP99 <= 0 {
		opt.SendDelayP99 = DefaultSendDelayP99
	}
	if opt.DipRatio <= 0 {
		opt.DipRatio = 0.9
	}
	if opt.DipMin <= 0 {
		opt.DipMin = 10
	}
	var out []Finding
	out = append(out, accounting(res))
	if f, ok := partAccounting(res); ok { // part.go
		out = append(out, f)
	}
	if f, ok := sessions(res); ok { // session.go
		out = append(out, f)
	}
	out = append(out, scheduleCount(res))
	if f, ok := stamps(res); ok { // stamps.go
		out = append(out, f)
	}
	if f, ok := shards(res, opt); ok { // shard.go
		out = append(out, f)
	}
	if f, ok := scenarioChecks(res); ok { // scenario.go
		out = append(out, f)
	}
	out = append(out, timeline(res, opt)...)
	out = append(out, sendDelay(res, opt), limit(res), failures(res))
	if f, ok := serverErrors(res); ok {
		out = append(out, f)
	}
	if f, ok := resends(res); ok { // resend.go
		out = append(out, f)
	}
	if f, ok := dwellBound(res); ok {
		out = append(out, f)
	}
	if f, ok := generator(res, opt); ok {
		out = append(out, f)
	}
	if f, ok := histograms(res); ok {
		out = append(out, f)
	}
	out = append(out, faults(res)...) // faults.go
	return out
}

// Worst returns the most severe severity among fs (Pass when empty).
func Worst(fs []Finding) Severity {
	w := Pass
	for _, f := range fs {
		switch {
		case f.Severity == Fail:
			return Fail
		case f.Severity == Warn:
			w = Warn
		}
	}
	return w
}

// ToChecks converts findings to the form stored in a result.
func ToChecks(fs []Finding) []result.Check {
	out := make([]result.Check, len(fs))
	for i, f := range fs {
		out[i] = result.Check{Name: f.Check, Severity: string(f.Severity), Message: f.Message}
	}
	return out
}

func accounting(res *result.Result) Finding {
	c := res.Counts
	sum := c.Completed + c.Errors + c.Timeouts + c.Unfinished
	f := Finding{Check: "accounting"}
	switch {
	case sum != c.Scheduled:
		f.Severity = Fail
		f.Message = fmt.Sprintf("completed %d + errors %d + timeouts %d + unfinished %d = %d ≠ scheduled %d: %d requests unaccounted for",
			c.Completed, c.Errors, c.Timeouts, c.Unfinished, sum, c.Scheduled, c.Scheduled-sum)
	case c.Sent > c.Scheduled:
		f.Severity = Fail
		f.Message = fmt.Sprintf("sent %d > scheduled %d", c.Sent, c.Scheduled)
	default:
		f.Severity = Pass
		f.Message = fmt.Sprintf("completed %d + errors %d + timeouts %d + unfinished %d = scheduled %d",
			c.Completed, c.Errors, c.Timeouts, c.Unfinished, c.Scheduled)
	}
	return f
}

func scheduleCount(res *result.Result) Finding {
	if res.Sessions != nil && len(res.Scenarios) == 0 {
		return sessionArrivals(res) // session.go: the arrivals are users
	}
	if res.Closed() {
		return closedSchedule(res)
	}
	if len(res.Scenarios) > 0 {
		// Each scenario's own check says what it scheduled, an
		// interrupted one too: the whole's expected count adds users of
		// session scenarios to requests of the others.
		return scenariosCount(res) // scenario.go
	}
	c := res.Counts
	f := Finding{Check: "schedule"}
	if res.Interrupted {
		f.Severity = Warn
		f.Message = fmt.Sprintf("run interrupted: %d of the %s expected requests were scheduled before the stop", c.Scheduled, fmtCount(c.Expected))
		return f
	}
	if l := res.Lazy; l != nil && l.Ended {
		return lazyEnded(res, l)
	}
	if f, ok := shardCount(res); ok { // shard.go
		return f
	}
	if res.Config.Arrival == schedule.Replay {
		return replayCount(res)
	}
	if atOnce(res) {
		return atOnceCount(res) // atonce.go
	}
	p, ok := schedule.Lookup(res.Config.Arrival)
	if !ok {
		// A result that names no process the table holds (one written
		// before results named theirs) was of constant arrivals.
		p, _ = schedule.Lookup(schedule.Constant)
	}
	return processCount(res, p)
}

// lazyEnded is the count check of a run whose targets, read as it sent
// them, ran out before its schedule: it stopped there, as vegeta -lazy
// stops at the end of its targets, one request per target. That is a
// warning, the run being what the user's targets asked for; an error
// that ended them fails the check, as it would have refused a run that
// read them whole.
func lazyEnded(res *result.Result, l *result.Lazy) Finding {
	c := res.Counts
	f := Finding{Check: "schedule", Severity: Warn}
	if l.Error != "" {
		f.Severity = Fail
		f.Message = fmt.Sprintf("the targets ended at an error after %d of the %s expected requests, at %.1f s: %s", c.Scheduled, fmtCount(c.Expected), l.AtS, l.Error)
		return f
	}
	f.Message = fmt.Sprintf("the targets ran out: %d targets, one request each, of the %s expected requests; scheduling stopped at %.1f s", c.Scheduled, fmtCount(c.Expected), l.AtS)
	return f
}

// processCount is the count check of a run of process p, read from p's
// row alone: an exact count must be ⌊Λ⌋ (Λ = Counts.Expected); a drawn
// one is reported in standard deviations of p.Spread from Λ, and warned
// of past schedule.CountSpreads of them.
func processCount(res *result.Result, p schedule.Process) Finding {
	c, cfg := res.Counts, res.Config
	if !p.Exact() {
		sd := p.Spread(c.Expected, cfg.Burstiness)
		if !math.IsNaN(sd) && !math.IsInf(sd, 0) {
			return drawnCount(res, p, sd)
		}
		// A spread that is no number (gamma without its shape, in a
		// result openload did not write) measures nothing: the count is
		// held to ⌊Λ⌋, in constant arrivals' words, as it always was.
		p, _ = schedule.Lookup(schedule.Constant)
	}
	w := p.CountWords(cfg.Burstiness, cfg.Stages != "")
	want := int64(math.Floor(c.Expected + 1e-9))
	what := w.Mean
	if cfg.Stages != "" {
		what = fmt.Sprintf("%s (%s)", w.Mean, fmtCount(c.Expected))
	}
	if c.Scheduled != want {
		return Finding{Check: "schedule", Severity: Fail, Message: fmt.Sprintf("scheduled %d ≠ %s = %d", c.Scheduled, what, want)}
	}
	return Finding{Check: "schedule", Severity: Pass, Message: fmt.Sprintf("scheduled %d = %s", c.Scheduled, what)}
}

// drawnCount is the count check of a drawn process p whose count has
// standard deviation sd.
func drawnCount(res *result.Result, p schedule.Process, sd float64) Finding {
	c, cfg := res.Counts, res.Config
	w := p.CountWords(cfg.Burstiness, cfg.Stages != "")
	z := 0.0
	if sd > 0 {
		z = (float64(c.Scheduled) - c.Expected) / sd
	}
	f := Finding{Check: "schedule", Severity: Pass}
	if math.Abs(z) > schedule.CountSpreads {
		f.Severity = Warn
	}
	of := ""
	if w.Spread != "" {
		of = " of " + w.Spread
	}
	f.Message = fmt.Sprintf("%s scheduled %d, expected %s = %s (%+.1f standard deviations%s)", w.Draw, c.Scheduled, w.Mean, fmtCount(c.Expected), tenths(z), of)
	return f
}

// closedSchedule compares a closed run's requests with its pacing schedule:
// every slot was either sent or skipped (never sent).
func closedSchedule(res *result.Result) Finding {
	c := res.Counts
	f := Finding{Check: "schedule"}
	if !res.ExpectedKnown() {
		f.Severity = Pass
		f.Message = fmt.Sprintf("closed loop without a rate: %s sent %d requests as fast as responses came back; with no schedule to compare with, waiting before the send cannot be seen",
			users(res.Config.Users), c.Scheduled)
		if res.Interrupted {
			f.Severity = Warn
			f.Message = fmt.Sprintf("run interrupted: closed loop without a rate sent %d requests before the stop", c.Scheduled)
		}
		return f
	}
	want := int64(math.Floor(c.Expected + 1e-9))
	switch sum := c.Scheduled + c.Skipped; {
	case res.Interrupted:
		f.Severity = Warn
		f.Message = fmt.Sprintf("run interrupted: the closed loop sent %d and never sent %d of the %d requests rate × duration calls for, before the stop", c.Scheduled, c.Skipped, want)
	case sum != want:
		f.Severity = Fail
		f.Message = fmt.Sprintf("sent %d + never sent %d = %d ≠ rate × duration = %d", c.Scheduled, c.Skipped, sum, want)
	case c.Skipped > 0:
		f.Severity = Warn
		f.Message = fmt.Sprintf("the closed loop sent %d of the %d requests rate × duration calls for: %d (%.1f %%) were never sent because their user was still waiting for a response; their waiting is missing from the percentiles (coordinated omission)",
			c.Scheduled, want, c.Skipped, 100*float64(c.Skipped)/float64(max(want, 1)))
	default:
		f.Severity = Pass
		f.Message = fmt.Sprintf("the closed loop sent all %d requests of rate × duration: no user was still waiting when its next slot came", want)
	}
	return f
}

// tenths rounds z to one decimal, as the messages print it, with no
// negative zero: a draw 0.04 standard deviations short reads +0.0.
func tenths(z float64) float64 {
	z = math.Round(z*10) / 10
	if z == 0 {
		return 0
	}
	return z
}

func users(n int) string {
	if n == 1 {
		return "1 user"
	}
	return fmt.Sprintf("%d users", n)
}

// timeline finds seconds with no sends although the schedule called for
// some, and seconds whose sends fell below the schedule (under DipRatio of
// it): the dip a closed loop leaves during a stall. In a closed run paced to
// a rate, what a second's schedule called for includes the slots no user
// took (Second.Skipped).
func timeline(res *result.Result, opt Options) []Finding {
	if res.Closed() && !res.ExpectedKnown() {
		return unpacedTimeline(res)
	}
	var empty, dips []int
	var dipSkipped int64
	for i, s := range res.Timeline {
		due := s.Due()
		if due == 0 {
			continue
		}
		if s.Sent == 0 {
			empty = append(empty, i)
		}
		if due >= opt.DipMin && float64(s.Sent) < opt.DipRatio*float64(due) {
			dips = append(dips, i)
			dipSkipped += s.Skipped
		}
	}
	var out []Finding
	f := Finding{Check: "timeline"}
	switch {
	case len(empty) == 0:
		f.Severity = Pass
		f.Message = fmt.Sprintf("every second of the schedule sent requests (%d s)", countScheduled(res.Timeline))
	case res.Closed():
		f.Severity = Warn
		f.Message = fmt.Sprintf("no request sent in second(s) %s although the pacing schedule called for them: every closed-loop user was waiting for a response",
			ranges(empty))
	case lateSeconds(res) > 0 && empty[len(empty)-1] < lateSeconds(res):
		f.Severity = Warn
		f.Message = fmt.Sprintf("no request sent in second(s) %s although due: the run began %s after its start instant, so what was due before then left late, at once (in send delay)",
			ranges(empty), fmtMs(res.Start.LateMs))
	case res.Limit.Waited > 0:
		f.Severity = Warn
		f.Message = fmt.Sprintf("no request sent in second(s) %s although due: all %d connections were busy, so the wait is in send delay",
			ranges(empty), res.Limit.Connections)
	case res.Lazy != nil && res.Lazy.Waited > 0:
		f.Severity = Warn
		f.Message = fmt.Sprintf("no request sent in second(s) %s although due: %s waited for their targets to be read, so the wait is in send delay",
			ranges(empty), plural(res.Lazy.Waited, "request"))
	default:
		f.Severity = Fail
		f.Message = fmt.Sprintf("no request sent in second(s) %s although due, and the connection limit never bound: the generator itself stalled",
			ranges(empty))
	}
	out = append(out, f)
	if atOnce(res) {
		return append(out, atOnceDips(res)) // atonce.go
	}
	d := Finding{Check: "send dips", Severity: Pass,
		Message: fmt.Sprintf("no second sent under %.0f %% of its schedule", opt.DipRatio*100)}
	if len(dips) > 0 {
		d.Severity = Warn
		d.Message = fmt.Sprintf("second(s) %s sent under %.0f %% of their schedule", ranges(dips), opt.DipRatio*100)
		if len(empty) > 0 {
			d.Message += fmt.Sprintf(" (%s sent nothing)", ranges(empty))
		}
		if dipSkipped > 0 {
			d.Message += fmt.Sprintf("; %d requests due in them were never sent", dipSkipped)
		}
	}
	return append(out, d)
}

// unpacedTimeline checks a closed run without a rate: with no schedule,
// only the seconds of the run in which nothing was sent at all can be named.
func unpacedTimeline(res *result.Result) []Finding {
	secs := len(res.Timeline)
	if d, err := time.ParseDuration(res.Config.Duration); err == nil {
		secs = int((d + time.Second - 1) / time.Second)
	}
	var empty []int
	for i := range secs {
		if i >= len(res.Timeline) || res.Timeline[i].Sent == 0 {
			empty = append(empty, i)
		}
	}
	f := Finding{Check: "timeline", Severity: Pass,
		Message: fmt.Sprintf("every second of the run sent requests (%d s)", secs)}
	if len(empty) > 0 {
		f.Severity = Warn
		f.Message = fmt.Sprintf("no request sent in second(s) %s: every closed-loop user was waiting for a response", ranges(empty))
	}
	return []Finding{f, {Check: "send dips", Severity: Pass,
		Message: "closed loop without a rate: no schedule to compare each second's sends with"}}
}

// lateSeconds is, for a run that began after its start instant
// (Result.Start), how many whole seconds of its schedule were over before
// it began, rounded up; 0 for a start within a second, or none given.
// What those seconds called for left at once, late: the checks name the
// late start, not the connections or the generator.
func lateSeconds(res *result.Result) int {
	if res.Start == nil || res.Start.LateMs < 1000 {
		return 0
	}
	return int(math.Ceil(res.Start.LateMs / 1000))
}

func countScheduled(t []result.Second) int {
	n := 0
	for _, s := range t {
		if s.Due() > 0 {
			n++
		}
	}
	return n
}

func sendDelay(res *result.Result, opt Options) Finding {
	f := Finding{Check: "send delay"}
	budget := float64(opt.SendDelayP99) / float64(time.Millisecond)
	p99 := res.SendDelay.P99
	if p99 <= budget {
		f.Severity = Pass
		f.Message = fmt.Sprintf("p99 %s ≤ %s: requests left on schedule", fmtMs(p99), fmtMs(budget))
		return f
	}
	if atOnce(res) && res.Limit.Waited > 0 {
		return atOnceSendDelay(res) // atonce.go
	}
	f.Severity = Warn
	f.Message = fmt.Sprintf("p99 %s > %s: requests left late", fmtMs(p99), fmtMs(budget))
	if lateSeconds(res) > 0 {
		f.Message += fmt.Sprintf(": the run began %s after its start instant, and what was due before then left that late, at once", fmtMs(res.Start.LateMs))
		if res.Limit.Waited > 0 {
			f.Message += fmt.Sprintf(", the backlog waiting for one of %d connections", res.Limit.Connections)
		}
	} else if res.Limit.Waited > 0 {
		f.Message += fmt.Sprintf(", mostly waiting for one of %d connections (raise the connection limit to send them on time)", res.Limit.Connections)
	} else if l := res.Lazy; l != nil && l.Waited > 0 {
		f.Message += fmt.Sprintf(": %s came due before their target was read, the targets coming slower than the schedule (feed them faster, or lower the rate)", plural(l.Waited, "request"))
	} else {
		f.Message += ": the generator fell behind its schedule"
	}
	return f
}

func limit(res *result.Result) Finding {
	l := res.Limit
	if res.Closed() {
		return Finding{Check: "connection limit", Severity: Pass,
			Message: fmt.Sprintf("closed loop: %s, each waiting for its response before sending again (max %d in flight)", users(res.Config.Users), l.MaxInFlight)}
	}
	if atOnce(res) && l.Waited > 0 {
		return atOnceLimit(res) // atonce.go
	}
	if l.Waited == 0 {
		return Finding{Check: "connection limit", Severity: Pass,
			Message: fmt.Sprintf("never bound (max %d in flight of %d)", l.MaxInFlight, l.Connections)}
	}
	if text, ok := StreamLimit(res); ok { // streamlimit.go
		return Finding{Check: "connection limit", Severity: Warn,
			Message: fmt.Sprintf("bound: all %d connections busy, streaming answers: %s", l.Connections, text)}
	}
	return Finding{Check: "connection limit", Severity: Warn,
		Message: fmt.Sprintf("bound: %d of %d requests found all %d connections busy and waited inside openload (counted as send delay)",
			l.Waited, res.Counts.Scheduled, l.Connections)}
}

func failures(res *result.Result) Finding {
	c := res.Counts
	bad := c.Errors + c.Timeouts + c.Unfinished
	if bad == 0 {
		return Finding{Check: "outcomes", Severity: Pass, Message: "every request completed"}
	}
	kinds := make([]string, 0, len(res.ErrorKinds))
	for k, n := range res.ErrorKinds {
		meaning := KindMeaning(k)
		switch {
		case k == "tls":
			meaning = TLSDetail(res) // target.go
		case k == "timeout" && res.Config.DialTimeout != "":
			meaning += ", or no connection within the dial timeout, " + res.Config.DialTimeout
		}
		kinds = append(kinds, fmt.Sprintf("%s %d (%s)", k, n, meaning))
	}
	sort.Strings(kinds)
	share := 0.0
	if c.Scheduled > 0 {
		share = 100 * float64(bad) / float64(c.Scheduled)
	}
	return Finding{Check: "outcomes", Severity: Warn,
		Message: fmt.Sprintf("%d of %d requests did not complete (%.1f %%: %s); their response time is counted as at least their elapsed time",
			bad, c.Scheduled, share, strings.Join(kinds, ", "))}
}

// serverErrors warns when most answers (over half) were server errors,
// a 5xx: the measurement is valid, but what it measured is a service
// failing, which a verdict of "valid" alone would hide. It warns rather
// than fails: an overload gate may answer 503 by design (the stub's
// deadline gate), and 429s and fallbacks are not 5xx at all. An
// objective on status.5xx is how a run fails on them.
func serverErrors(res *result.Result) (Finding, bool) {
	var answered, n int64
	var codes []string
	for _, s := range SortedByCount(res.Status) {
		answered += res.Status[s]
		if len(s) == 3 && s[0] == '5' {
			n += res.Status[s]
			codes = append(codes, fmt.Sprintf("%s ×%d", s, res.Status[s]))
		}
	}
	if answered == 0 || 2*n <= answered {
		return Finding{}, false
	}
	return Finding{Check: "server errors", Severity: Warn,
		Message: fmt.Sprintf("%d of %d answers were 5xx (%.1f %%: %s): the service failed most requests; an objective status.5xx<=N%% fails the run on them",
			n, answered, 100*float64(n)/float64(answered), strings.Join(codes, " · "))}, true
}

func histograms(res *result.Result) (Finding, bool) {
	if res.Clamped == 0 && res.Dropped == 0 {
		return Finding{}, false
	}
	return Finding{Check: "histograms", Severity: Warn,
		Message: fmt.Sprintf("%d values above the 1 h histogram range were recorded at its top; %d lost when merging", res.Clamped, res.Dropped)}, true
}

// ranges renders sorted second indexes as "3-5, 9".
func ranges(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	if len(parts) > 12 {
		parts = append(parts[:12], fmt.Sprintf("… (%d more)", len(parts)-12))
	}
	return strings.Join(parts, ", ")
}

func fmtMs(v float64) string {
	return fmt.Sprintf("%.3f ms", v)
}

func fmtCount(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}
