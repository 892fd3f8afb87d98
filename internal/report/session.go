package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/openload/openload/result"
)

// A session run (issue 52): its steps are parts, in the table a request
// mix's targets use (PartTable), its turns' stream figures a table of
// their own when any step streamed, and its users' account in lines
// under them, as the counts line is for requests.

// noSample is a figure with no sample: never shown as 0.
const noSample = "no data"

// SessionRuns writes the session figures of res, or, in a run of
// several scenarios, of each scenario that had sessions, under its own
// heading; nothing for a run without. A run of scenarios shows only
// theirs: its steps and sessions are its scenarios', each with steps of
// its own, so a whole of them has no step to name. The legends are
// under the first scenario's tables only.
func SessionRuns(w io.Writer, res *result.Result) error {
	said := legends{}
	if len(res.Scenarios) == 0 {
		return sessionRun(w, "", res, said)
	}
	for _, sc := range res.Scenarios {
		if sc.Result == nil {
			continue
		}
		if err := sessionRun(w, "scenario "+sc.Name+" · ", sc.Result, said); err != nil {
			return err
		}
	}
	return nil
}

// sessionRun writes the steps, the streamed turns and the sessions of a
// session run's result res, each heading begun with prefix ("scenario
// shop · " for a scenario of a run of several), and the legends said
// has not; nothing when res has neither steps nor sessions.
func sessionRun(w io.Writer, prefix string, res *result.Result, said legends) error {
	if len(res.Steps) == 0 && res.Sessions == nil {
		return nil
	}
	if len(res.Steps) > 0 {
		fmt.Fprintf(w, "\n%sby step\n", prefix)
		if err := PartTable(w, "step", res.Headline().Scheduled, res.Steps); err != nil { // part.go
			return err
		}
		said.say(w, partErrorsNote("step"))
		if err := stepStreamTable(w, prefix, res.Steps, said); err != nil {
			return err
		}
	}
	if s := res.Sessions; s != nil {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "sessions %s\n", SessionCountsLine(s, res.Steps))
		fmt.Fprintf(w, "session  time %s\n", sessionTime(s))
		fmt.Fprintf(w, "         %s\n", peakInProgress(s))
	}
	return nil
}

// stepStreamTable writes, when any step streamed (a conversation's
// turns), one row per step: its streamed requests, their prompt, cached
// prompt and output tokens (means, the server's counts), TTFT from the
// due time and from the send, and TPOT, then its legend unless said has
// it; nothing otherwise.
func stepStreamTable(w io.Writer, prefix string, steps []result.Part, said legends) error {
	streamed := false
	for _, p := range steps {
		streamed = streamed || p.Stream != nil
	}
	if !streamed {
		return nil
	}
	fmt.Fprintf(w, "\n%sby step · streamed answers\n", prefix)
	head := []string{"step", "streamed", "prompt tok", "cached tok", "output tok", "TTFT p50", "TTFT p99", "send TTFT p50", "send TTFT p99", "TPOT p50"}
	var rows [][]string
	for _, p := range steps {
		s := p.Stream
		if s == nil {
			s = &result.PartStream{}
		}
		out := noSample
		if s.Streamed > 0 {
			out = fmt.Sprintf("%.1f", float64(s.OutputTokens)/float64(s.Streamed))
		}
		cached := "—"
		if c := s.CachedTokens; c != nil && c.Requests > 0 {
			cached = tokensMean(c)
		}
		row := []string{p.Name, fmt.Sprint(s.Streamed), tokensMean(s.PromptTokens), cached, out,
			figure(s.TTFTResponse, "p50"), figure(s.TTFTResponse, "p99"), figure(s.TTFTService, "p50"), figure(s.TTFTService, "p99"),
			figure(s.TPOT, "p50")}
		rows = append(rows, row)
	}
	// Too wide for a terminal: the requests and tokens, then the
	// latencies.
	if err := fitTables(w, leftFirst(len(head)), head, rows, slices.Index(head, "TTFT p50")); err != nil {
		return err
	}
	said.say(w, StepStreamNote)
	return nil
}

// StepStreamNote says what the streamed steps' table holds.
const StepStreamNote = "ms · TTFT = first token − due (the step's scheduled time: what the user waited) · send TTFT = first token − sent · TPOT = (last − first token) ÷ (tokens − 1) · " +
	"prompt, cached and output tok = means per request (the server's counts; cached: read from its prefix cache, — when it reported none)"

// figure is percentile stat of p in ms, "no data" without samples.
func figure(p result.Percentiles, stat string) string {
	if p.Count == 0 {
		return noSample
	}
	v, _ := p.Get(stat)
	return ms(v)
}

// tokensMean is the mean of a token count, "no data" when no request had
// one.
func tokensMean(t *result.Tokens) string {
	if t == nil || t.Requests == 0 {
		return noSample
	}
	return fmt.Sprintf("%.1f", t.Mean)
}

// SessionCountsLine is the sessions' accounting in one line, as
// CountsLine is the requests': expected, started, and how the started
// ended (early: at which steps, by name, in the steps' order), with a
// mark saying whether each ended in exactly one way.
func SessionCountsLine(s *result.Sessions, steps []result.Part) string {
	mark := "✓ every session accounted for"
	if !s.Balanced() {
		mark = fmt.Sprintf("✗ %d sessions unaccounted for", s.Started-(s.Completed+s.EndedEarly+s.Unfinished))
	}
	early := fmt.Sprint(s.EndedEarly)
	var at []string
	for i, n := range s.EndedAt {
		if n == 0 {
			continue
		}
		name := fmt.Sprintf("step %d", i+1)
		if i < len(steps) {
			name = steps[i].Name
		}
		at = append(at, fmt.Sprintf("%s ×%d", name, n))
	}
	if len(at) > 0 {
		early += " (" + strings.Join(at, " · ") + ")"
	}
	return fmt.Sprintf("expected %d · started %d · completed %d · ended early %s · unfinished %d   %s",
		s.Expected, s.Started, s.Completed, early, s.Unfinished, mark)
}

// sessionTime is the ended sessions' time, or why there is none.
func sessionTime(s *result.Sessions) string {
	p := s.Time
	if p.Count == 0 {
		return noSample + ": no session ended"
	}
	return fmt.Sprintf("p50 %s · p90 %s · p99 %s · max %s ms, of the %d that ended (from arrival to the last step's done)",
		ms(p.P50), ms(p.P90), ms(p.P99), ms(p.Max), p.Count)
}

// peakInProgress is the most sessions in progress at a second's end.
func peakInProgress(s *result.Sessions) string {
	if len(s.Timeline) == 0 {
		return "peak in progress " + noSample
	}
	peak := s.Timeline[0]
	for _, sec := range s.Timeline[1:] {
		if sec.InProgress > peak.InProgress {
			peak = sec
		}
	}
	return fmt.Sprintf("peak in progress %d (at the end of second %d)", peak.InProgress, peak.Second)
}

// SessionRate is the rate the sessions were scheduled at: "scheduled
// 20/s", or over stages their mean, ∫λ dt ÷ duration.
func SessionRate(res *result.Result) string {
	if res.Config.Stages == "" {
		return "scheduled " + count(res.Config.Rate) + "/s"
	}
	d, err := time.ParseDuration(res.Config.Duration)
	mean := 0.0
	if err == nil && d > 0 && res.Sessions != nil {
		mean = float64(res.Sessions.Expected) / d.Seconds()
	}
	return fmt.Sprintf("scheduled ∫λ dt ÷ duration = %s/s, stages %s", count(mean), res.Config.Stages)
}
