package recorder

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Streamed answers (server-sent events from a model server).
//
// A streamed request has more points than the three timestamps: its
// first token and its last token (Record.FirstToken, LastToken), tokens
// of any kind, a reasoning model's thinking included, as vLLM's benchmark
// and GuideLLM count them; its first answer token (Record.FirstAnswer),
// the first text of the answer itself, after the thinking; and the
// number of output tokens it got (Record.Tokens: the server's usage count
// when it sent one, else the token events counted). From them, as
// response and service time are derived from done:
//
//	TTFT from the schedule = first token − scheduled    what a user waited for the first token
//	TTFT from the send     = first token − sent         what sending-time tools report
//	TTFA from the schedule = first answer − scheduled   what a user waited for the answer to start
//	TTFA from the send     = first answer − sent        GuideLLM's time to first output token
//	TPOT                   = (last token − first token) / (tokens − 1)
//	ITL                    = every gap between two token events of one stream
//
// Without thinking, TTFA is TTFT. docs/REFERENCE.md ("Token figures")
// sets them next to vLLM's benchmark and GuideLLM.
//
// ITL is recorded gap by gap from TokenEvent batches (AddTokens), never
// held per request. TTFT and TPOT come from completed records that got at
// least one token event, TTFA from those that got an answer event; a
// streamed request that timed out or was abandoned before its first
// token (answer token) has its TTFT (TTFA) recorded at its elapsed time,
// a lower bound, as response time is for censored requests.
//
// A stream that failed after some tokens — cut by a reset, or ended by the
// server's own error event under its 200 (KindStream: vLLM's and the
// OpenAI API's data: {"error": …}, or an SSE event: error) — is an error,
// not a completed request: its record keeps the points and tokens it got
// (the log's stream columns), its tokens count in OutputTokens and its
// gaps in ITL, but it adds no TTFT or TPOT and is never goodput; its
// status is counted with the failed heads (wire.go), not with the answers.
//
// Goodput is the number of requests that met every per-request objective
// (SetRequestObjectives), DistServe's and vLLM's definition: completed
// with a 2xx status, at least one token, and each figure named within its
// bound.

// TokenEvent is one token event of a stream as the engine hands it over
// in batches: At is its offset from the run's start, Gap the time since the
// stream's previous token event, or negative for a stream's first.
type TokenEvent struct {
	At  time.Duration
	Gap time.Duration
}

// StreamStats are a run's stream figures as the recorder counts them;
// Fill writes them as the result's StreamResult.
type StreamStats struct {
	TTFTResponse, TTFTService, ITL, TPOT *hdrhistogram.Histogram
	// TTFAResponse and TTFAService are the time to the first answer
	// token from the schedule and from the send.
	TTFAResponse, TTFAService *hdrhistogram.Histogram
	Requests                  int64 // records that were streams
	OutputTokens              int64
	Events                    int64 // token events, as counted in the timeline
	Met                       int64 // requests meeting every per-request objective
	Clamped                   int64
	// Prompt and Asked hold per request its prompt tokens and the output
	// tokens it asked for (Record.PromptTokens, AskedTokens), when known;
	// PromptSum and AskedSum their sums, Received the output tokens of
	// the requests that asked, Short the completed ones that got fewer.
	Prompt, Asked                        *hdrhistogram.Histogram
	PromptSum, AskedSum, Received, Short int64
	// Cached holds per request the prompt tokens the server read from its
	// prefix cache (Record.CachedTokens), when it said; nil until one
	// did. CachedSum is their sum.
	Cached    *hdrhistogram.Histogram
	CachedSum int64
}

// NewStreamStats returns empty stream figures.
func NewStreamStats() *StreamStats {
	return &StreamStats{TTFTResponse: result.NewHistogram(), TTFTService: result.NewHistogram(), ITL: result.NewHistogram(), TPOT: result.NewHistogram(),
		TTFAResponse: result.NewHistogram(), TTFAService: result.NewHistogram(), Prompt: result.NewHistogram(), Asked: result.NewHistogram()}
}

func (s *StreamStats) record(h *hdrhistogram.Histogram, d time.Duration) {
	recordStream(h, d, &s.Clamped)
}

// recordStream records d in h, a value above the range at its top,
// counted in *clamped.
func recordStream(h *hdrhistogram.Histogram, d time.Duration, clamped *int64) {
	us := max(int64(d/time.Microsecond), 0)
	if us > result.HistHighest {
		us, *clamped = result.HistHighest, *clamped+1
	}
	_ = h.RecordValue(us) // in range by construction
}

// recordCount records a token count, within the histogram's range.
func recordCount(h *hdrhistogram.Histogram, n int) {
	_ = h.RecordValue(min(int64(n), result.HistHighest))
}

// RequestObjective bounds one per-request stream figure: Metric is ttft
// (from the schedule), ttft_service (from the send), tpot or response.
type RequestObjective struct {
	Metric string
	Max    time.Duration
}

// RequestMetrics are the figures a RequestObjective may name.
var RequestMetrics = []string{"ttft", "ttft_service", "tpot", "response"}

// ParseRequestObjectives parses --slo-request's list, e.g.
// "ttft<=500ms,tpot<=50ms": comma-separated METRIC<=DURATION.
func ParseRequestObjectives(s string) ([]RequestObjective, error) {
	var out []RequestObjective
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		name, v, ok := strings.Cut(part, "<=")
		name, v = strings.TrimSpace(name), strings.TrimSpace(v)
		if !ok || name == "" || v == "" {
			return nil, fmt.Errorf("request objective %q: write METRIC<=DURATION, e.g. ttft<=500ms", part)
		}
		known := false
		for _, m := range RequestMetrics {
			known = known || m == name
		}
		if !known {
			return nil, fmt.Errorf("request objective %q: unknown metric %q (known: %s)", part, name, strings.Join(RequestMetrics, ", "))
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("request objective %q: %q is not a positive duration such as 500ms", part, v)
		}
		out = append(out, RequestObjective{Metric: name, Max: d})
	}
	return out, nil
}

// FormatRequestObjectives is the inverse of ParseRequestObjectives.
func FormatRequestObjectives(objs []RequestObjective) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.Metric + "<=" + o.Max.String()
	}
	return strings.Join(parts, ",")
}

// TPOT is (last token − first token) / (tokens − 1), or 0 with fewer than
// two tokens.
func (r *Record) TPOT() time.Duration {
	if r.Tokens < 2 {
		return 0
	}
	return (r.LastToken - r.FirstToken) / time.Duration(r.Tokens-1)
}

// TTFTService is first token − the final attempt's sent.
func (r *Record) TTFTService() time.Duration { return r.FirstToken - r.finalSent() }

// TTFAService is first answer token − the final attempt's sent.
func (r *Record) TTFAService() time.Duration { return r.FirstAnswer - r.finalSent() }

// finalSent is the final attempt's sent.
func (r *Record) finalSent() time.Duration {
	if r.sentAgain() {
		return r.LastSent
	}
	return r.Sent
}

// meets reports whether rec met every objective in objs.
func meets(rec *Record, objs []RequestObjective) bool {
	if rec.Outcome != Completed || rec.Status < 200 || rec.Status > 299 || rec.Events == 0 {
		return false
	}
	for _, o := range objs {
		var v time.Duration
		switch o.Metric {
		case "ttft":
			v = rec.FirstToken - rec.Scheduled
		case "ttft_service":
			v = rec.TTFTService()
		case "tpot":
			v = rec.TPOT()
		case "response":
			v = rec.Response()
		}
		if v > o.Max {
			return false
		}
	}
	return true
}

// StreamRun marks the recorder's run as one of streamed answers (--stream):
// the result gets its stream figures even when no stream came back, and
// requests that got no token before they timed out are counted in TTFT
// at their elapsed time. Call it before the first Add.
func (r *Recorder) StreamRun() { r.streamStats() }

// SetRequestObjectives sets the per-request objectives goodput counts
// against. Call it before the first Add.
func (r *Recorder) SetRequestObjectives(objs []RequestObjective) {
	r.streamStats()
	r.objectives = objs
}

func (r *Recorder) streamStats() *StreamStats {
	if r.stream == nil {
		r.stream = NewStreamStats()
	}
	return r.stream
}

// Stream returns the run's stream figures, nil when no request streamed
// and the run was not marked a stream run.
func (r *Recorder) Stream() *StreamStats { return r.stream }

// addStream records rec's stream figures (Add).
func (r *Recorder) addStream(rec *Record) {
	s := r.stream
	if firstToken(s.TTFTResponse, s.TTFTService, s.TPOT, rec, &s.Clamped) {
		s.Requests++
	}
	switch {
	case rec.Events > 0 && rec.Outcome == Completed && rec.FirstAnswer > 0:
		s.record(s.TTFAResponse, rec.FirstAnswer-rec.Scheduled)
		s.record(s.TTFAService, rec.TTFAService())
	case (rec.Outcome == TimedOut || rec.Outcome == Unfinished) && rec.FirstAnswer == 0:
		// No answer token before the user gave up: TTFA is at least this.
		s.censor(s.TTFAResponse, s.TTFAService, rec)
	}
	s.OutputTokens += int64(rec.Tokens)
	if rec.PromptTokens > 0 {
		s.PromptSum += int64(rec.PromptTokens)
		recordCount(s.Prompt, rec.PromptTokens)
	}
	if rec.CachedTokens > 0 {
		if s.Cached == nil {
			s.Cached = result.NewHistogram()
		}
		s.CachedSum += int64(rec.CachedTokens)
		recordCount(s.Cached, rec.CachedTokens)
	}
	if rec.AskedTokens > 0 {
		s.AskedSum += int64(rec.AskedTokens)
		s.Received += int64(rec.Tokens)
		recordCount(s.Asked, rec.AskedTokens)
		if rec.Outcome == Completed && rec.Tokens < rec.AskedTokens {
			s.Short++
		}
	}
	if r.objectives != nil && meets(rec, r.objectives) {
		s.Met++
	}
}

// firstToken records what rec adds to the TTFT from the schedule
// (resp), the TTFT from the send (serv) and the TPOT (tpot) of a set of
// stream figures, and reports whether rec counts as a streamed request
// there. The run's figures (StreamStats) and each part's (partStream)
// take them here alike, so that the parts add up to the run:
//
//	completed, with a token    TTFT from the first token; TPOT (Record.TPOT) with two or more
//	timed out or unfinished    TTFT at its elapsed time, a lower bound, when no token came
//
// A value above the range is recorded at its top and counted in *clamped.
func firstToken(resp, serv, tpot *hdrhistogram.Histogram, rec *Record, clamped *int64) (streamed bool) {
	switch {
	case rec.Events > 0 && rec.Outcome == Completed:
		recordStream(resp, rec.FirstToken-rec.Scheduled, clamped)
		recordStream(serv, rec.TTFTService(), clamped)
		if rec.Tokens >= 2 {
			recordStream(tpot, rec.TPOT(), clamped)
		}
		return true
	case rec.Outcome == TimedOut || rec.Outcome == Unfinished:
		// No token before the user gave up: TTFT is at least this.
		if rec.Events == 0 {
			censor(resp, serv, rec, clamped)
		}
		return rec.Events > 0
	}
	return rec.Streamed
}

// censor records rec's elapsed time, a lower bound, in resp and (when it
// was sent) its service time in serv.
func (s *StreamStats) censor(resp, serv *hdrhistogram.Histogram, rec *Record) {
	censor(resp, serv, rec, &s.Clamped)
}

func censor(resp, serv *hdrhistogram.Histogram, rec *Record, clamped *int64) {
	recordStream(resp, rec.Response(), clamped)
	if rec.WasSent {
		recordStream(serv, rec.Service(), clamped)
	}
}

// AddTokens records a batch of token events: each gap in the ITL
// histogram, each event in the timeline's second. It does not allocate
// once the timeline covers the events.
func (r *Recorder) AddTokens(evs []TokenEvent) {
	if len(evs) == 0 {
		return
	}
	s := r.streamStats()
	for _, e := range evs {
		s.Events++
		r.second(e.At).Tokens++
		if e.Gap >= 0 {
			s.record(s.ITL, e.Gap)
		}
	}
}

// fillStream sets res.Stream and its histograms from r (none when no
// request streamed and the run was not a stream run); res.Elapsed and
// res.Counts must be set.
func (r *Recorder) fillStream(res *result.Result) error {
	res.Stream = nil
	hs := &res.Histograms
	hs.TTFTResponse, hs.TTFTService, hs.ITL, hs.TPOT, hs.TTFAResponse, hs.TTFAService = "", "", "", "", "", ""
	s := r.stream
	if s == nil {
		return nil
	}
	res.Clamped += s.Clamped
	st := &result.StreamResult{
		TTFTResponse: result.Summarize(s.TTFTResponse),
		TTFTService:  result.Summarize(s.TTFTService),
		ITL:          result.Summarize(s.ITL),
		TPOT:         result.Summarize(s.TPOT),
		TTFAResponse: result.Summarize(s.TTFAResponse),
		TTFAService:  result.Summarize(s.TTFAService),
		OutputTokens: s.OutputTokens,
	}
	if r.objectives != nil {
		st.Goodput = &result.Goodput{Objectives: FormatRequestObjectives(r.objectives), Met: s.Met}
	}
	var err error
	if st.PromptTokens, err = result.SummarizeTokens(s.Prompt, s.PromptSum); err != nil {
		return err
	}
	if s.Cached != nil {
		if st.CachedTokens, err = result.SummarizeTokens(s.Cached, s.CachedSum); err != nil {
			return err
		}
	}
	asked, err := result.SummarizeTokens(s.Asked, s.AskedSum)
	if err != nil {
		return err
	}
	if asked != nil {
		st.Asked = &result.Asked{Tokens: *asked, Received: s.Received, Short: s.Short}
	}
	st.SetRates(res.Elapsed, res.Counts)
	res.Stream = st
	for _, p := range []struct {
		dst *string
		h   *hdrhistogram.Histogram
	}{{&hs.TTFTResponse, s.TTFTResponse}, {&hs.TTFTService, s.TTFTService}, {&hs.ITL, s.ITL}, {&hs.TPOT, s.TPOT},
		{&hs.TTFAResponse, s.TTFAResponse}, {&hs.TTFAService, s.TTFAService}} {
		enc, err := result.EncodeHistogram(p.h)
		if err != nil {
			return err
		}
		*p.dst = enc
	}
	return nil
}

// StreamLogColumns are the columns a stream run's per-request log appends
// after the fixed ones (NewStreamLogWriter): first byte, first and last
// token (ms from the start, empty when there was none), output tokens,
// and the prompt tokens and output tokens asked (empty when not known).
// Logs written before the last two have four stream columns.
const StreamLogColumns = "first_byte_ms,first_token_ms,last_token_ms,output_tokens,prompt_tokens,asked_tokens"

// appendStream appends a record's stream columns, each after a comma.
func appendStream(b []byte, r *Record) []byte {
	b = append(b, ',')
	if r.GotFirstByte {
		b = appendMillis(b, r.FirstByte)
	}
	b = append(b, ',')
	if r.Events > 0 {
		b = appendMillis(b, r.FirstToken)
	}
	b = append(b, ',')
	if r.Events > 0 {
		b = appendMillis(b, r.LastToken)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Tokens), 10)
	for _, n := range [...]int{r.PromptTokens, r.AskedTokens} {
		b = append(b, ',')
		if n > 0 {
			b = strconv.AppendInt(b, int64(n), 10)
		}
	}
	return b
}

// parseStream reads the stream columns f (4 or 6 fields) into e.
func parseStream(f []string, e *LogEntry) error {
	names := [...]string{"first_byte_ms", "first_token_ms", "last_token_ms"}
	dst := [...]*time.Duration{&e.FirstByte, &e.FirstToken, &e.LastToken}
	for i, v := range f[:3] {
		if v == "" {
			*dst[i] = -1
			continue
		}
		d, err := parseMillis(v)
		if err != nil {
			return fmt.Errorf("%s: %v", names[i], err)
		}
		*dst[i] = d
	}
	n, err := strconv.ParseUint(f[3], 10, 31)
	if err != nil {
		return fmt.Errorf("bad output_tokens %q", f[3])
	}
	e.Tokens = int(n)
	e.Streamed = true
	for i, dst := range [...]*int{&e.PromptTokens, &e.AskedTokens} {
		if len(f) <= 4+i || f[4+i] == "" {
			continue
		}
		n, err := strconv.ParseUint(f[4+i], 10, 31)
		if err != nil {
			return fmt.Errorf("bad %s %q", [...]string{"prompt_tokens", "asked_tokens"}[i], f[4+i])
		}
		*dst = int(n)
	}
	return nil
}
