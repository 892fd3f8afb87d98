package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/openload/openload/result"
)

// StreamRows are a stream run's latency rows: TTFT from the schedule and
// from the send side by side, as response and service time are, the time
// to the first answer token likewise (a result written before it was
// kept has none, and shows none), then ITL and TPOT.
func StreamRows(s *result.StreamResult) []Row {
	rows := []Row{
		{"TTFT from schedule", s.TTFTResponse},
		{"TTFT from send", s.TTFTService},
	}
	if hasTTFA(s) {
		rows = append(rows, Row{"TTFA from schedule", s.TTFAResponse}, Row{"TTFA from send", s.TTFAService})
	}
	return append(rows, Row{"ITL", s.ITL}, Row{"TPOT", s.TPOT})
}

func hasTTFA(s *result.StreamResult) bool { return s.TTFAResponse.Count > 0 || s.TTFAService.Count > 0 }

// StreamLines writes the stream figures of res, if it has any: the
// latency rows, the tokens and their rate, and goodput next to
// throughput.
func StreamLines(w io.Writer, res *result.Result) error {
	s := res.Stream
	if s == nil {
		return nil
	}
	fmt.Fprintln(w, "\nstreamed answers (server-sent events or NDJSON)")
	if s.TTFTResponse.Count == 0 && s.OutputTokens == 0 {
		// The fields each format's events are read for (engine/stream.go),
		// and the knob that turns streaming on or off.
		fmt.Fprintln(w, "no response carried a token event (server-sent events: a data: line with a non-empty choices[0].delta.content or choices[0].text, "+
			"llama.cpp's content or TGI's token.text; NDJSON: a line with a non-empty response or message.content): "+
			"does the request body ask for \"stream\": true? (Ollama's /api/generate and /api/chat stream unless it says \"stream\": false)")
		return nil
	}
	if err := LatencyTable(w, StreamRows(s)); err != nil {
		return err
	}
	fmt.Fprint(w, "TTFT from schedule = first token − scheduled (what users waited for the first token) · TTFT from send = first token − sent (what sending-time tools report) · ")
	if hasTTFA(s) {
		fmt.Fprint(w, "TTFA = first answer token, after a reasoning model's thinking (TTFT's without thinking) · ")
	}
	fmt.Fprintln(w, "ITL = each gap between tokens · TPOT = (last − first token) ÷ (tokens − 1) · a token is one of any kind, thinking included (vLLM's benchmark's and GuideLLM's)")
	perSec := make([]int64, 0, len(res.Timeline))
	for _, sec := range res.Timeline {
		perSec = append(perSec, sec.Tokens)
	}
	fmt.Fprintf(w, "tokens   %d output tokens · %.1f/s over the run", s.OutputTokens, s.TokensPerS)
	if len(perSec) > 0 {
		sorted := slices.Clone(perSec)
		slices.Sort(sorted)
		fmt.Fprintf(w, " · token events per second of the run: min %d, median %d, max %d", sorted[0], sorted[len(sorted)/2], sorted[len(sorted)-1])
	}
	fmt.Fprintln(w)
	if p := s.PromptTokens; p != nil {
		fmt.Fprintf(w, "prompts  %d requests · prompt tokens p50 %d, min %d, max %d, mean %.1f (the server's usage count where it sent one, else openload's count of the prompt it made)\n",
			p.Requests, p.P50, p.Min, p.Max, p.Mean)
	}
	if a := s.Asked; a != nil {
		fmt.Fprintf(w, "asked    %d requests asked for %d output tokens (p50 %d, min %d, max %d) · received %d · %d completed with fewer than they asked\n",
			a.Requests, a.Sum, a.P50, a.Min, a.Max, a.Received, a.Short)
	}
	if g := s.Goodput; g != nil {
		fmt.Fprintf(w, "goodput  %.2f req/s met %s (%d requests, %.1f %% of scheduled) · throughput %.2f req/s completed\n",
			g.PerS, g.Objectives, g.Met, 100*g.MetFraction, g.Throughput)
	}
	return nil
}

// TTFTSendVsSchedule writes, below a stream run's service-vs-response
// diff, its TTFT from the send (what GuideLLM, vLLM's benchmark and
// genai-perf report) next to its TTFT from the schedule (what users
// waited for the first token), with a verdict as serviceVerdict's.
func TTFTSendVsSchedule(w io.Writer, send, sched result.Percentiles) error {
	fmt.Fprintf(w, "\ntime to first token · from send %d · from schedule %d\n\n", send.Count, sched.Count)
	if err := DiffTable(w, Side{"send", send}, Side{"schedule", sched}); err != nil {
		return err
	}
	fmt.Fprintln(w, "send = first token − sent (what sending-time tools report) · schedule = first token − scheduled (what users waited)")
	if !Diverge(send.P99, sched.P99) {
		fmt.Fprintf(w, "\nverdict  TTFT from the send and from the schedule agree at p99 (%s vs %s ms, within ×%.1f or %.0f ms): requests left on schedule\n",
			ms(send.P99), ms(sched.P99), DivergeRatio, DivergeMinMs)
		return nil
	}
	wait := sched.P99 - send.P99
	fmt.Fprintf(w, "\nverdict  DIVERGE: at p99, %.1f %% of the time to first token (%s of %s ms) is waiting before the request was sent; TTFT from the send, what sending-time tools report, says %s ms\n",
		100*wait/sched.P99, ms(wait), ms(sched.P99), ms(send.P99))
	return nil
}
