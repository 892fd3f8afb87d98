package result

// A session run (issue 52): each arrival of the schedule is a user who
// walks a scenario's steps in order, each step a request timed from when
// it was due (the arrival, then the previous step's done plus its think
// time). The headline figures are the steps'; Steps holds each step's own
// figures (a Part each, as a request mix's targets), and Sessions the
// users': how many started, how they ended, how long they took and how
// many were in progress second by second.

// Sessions is a session run's account of its users.
type Sessions struct {
	// Expected is the arrivals the schedule held, as its dispatcher
	// walked them (Counts.Expected is their ∫λ dt); Started the sessions
	// that began and gave an account. Every started session
	// ends in exactly one of Completed, EndedEarly and Unfinished.
	Expected   int64 `json:"expected"`
	Started    int64 `json:"started"`
	Completed  int64 `json:"completed"`
	EndedEarly int64 `json:"ended_early"`
	Unfinished int64 `json:"unfinished"`
	// EndedAt counts the sessions ended early by the step they ended at,
	// by step index (Steps' order).
	EndedAt []int64 `json:"ended_at"`
	// StepRecords is the steps the sessions account for (the sum of
	// each session's steps given a record): the counts check holds it
	// equal to the steps the recorder counted (Counts.Scheduled).
	StepRecords int64 `json:"step_records"`
	// Time is the session's own time, from its arrival to its last
	// step's done, of the sessions that completed or ended early (an
	// unfinished one's is a lower bound, and is left out).
	Time      Percentiles `json:"time"`
	Histogram string      `json:"histogram"` // Time's, encoded (EncodeHistogram), µs
	// Timeline is second by second: the sessions that started and ended
	// in it, and those in progress at its end.
	Timeline []SessionSecond `json:"timeline"`
}

// SessionSecond is one second of a session run.
type SessionSecond struct {
	Second     int   `json:"second"`
	Started    int64 `json:"started"`
	Ended      int64 `json:"ended"`
	InProgress int64 `json:"in_progress"`
}

// Balanced reports whether every started session ended in one outcome.
func (s *Sessions) Balanced() bool {
	return s.Completed+s.EndedEarly+s.Unfinished == s.Started
}

// PartStream is a part's stream figures: what a step of a conversation
// (a turn) reports per turn index. Nil when none of the part's requests
// streamed.
type PartStream struct {
	Streamed     int64       `json:"streamed"` // the part's requests read as streams
	TTFTResponse Percentiles `json:"ttft_response"`
	TTFTService  Percentiles `json:"ttft_service"`
	TPOT         Percentiles `json:"tpot"`
	OutputTokens int64       `json:"output_tokens"`
	// PromptTokens and CachedTokens are the server's counts, where it
	// sent them: the prompt and the part of it read from its prefix
	// cache (usage.prompt_tokens_details.cached_tokens); nil when no
	// request had one.
	PromptTokens *Tokens `json:"prompt_tokens,omitempty"`
	CachedTokens *Tokens `json:"cached_tokens,omitempty"`
	// Histograms encodes TTFTResponse, TTFTService and TPOT (µs), so
	// that shards' parts merge without loss.
	Histograms PartStreamHistograms `json:"histograms"`
}

// PartStreamHistograms are a part's stream histograms, encoded.
type PartStreamHistograms struct {
	TTFTResponse string `json:"ttft_response"`
	TTFTService  string `json:"ttft_service"`
	TPOT         string `json:"tpot"`
}

// merge adds o (another shard's or scenario's sessions, whose second 0
// is shift seconds after s's) to s; either may be nil. Counts and the
// ended-early counts by step are summed, the time's histogram is added
// without loss and Time read from the sum, and the timelines are added
// second by second as a run's (mergeTimelines), the sessions in progress
// counted again from the sums.
func (s *Sessions) merge(o *Sessions, shift int, m *merger) *Sessions {
	if s == nil && o == nil {
		return nil
	}
	var a, b Sessions
	if s != nil {
		a = *s
	}
	if o != nil {
		b = *o
	}
	sum := Sessions{
		Expected: a.Expected + b.Expected, Started: a.Started + b.Started, Completed: a.Completed + b.Completed,
		EndedEarly: a.EndedEarly + b.EndedEarly, Unfinished: a.Unfinished + b.Unfinished, StepRecords: a.StepRecords + b.StepRecords,
		EndedAt: make([]int64, max(len(a.EndedAt), len(b.EndedAt))),
	}
	for _, x := range [...][]int64{a.EndedAt, b.EndedAt} {
		for i, n := range x {
			sum.EndedAt[i] += n
		}
	}
	sum.Histogram, sum.Time = m.hist(a.Histogram, b.Histogram, "session time")
	n := len(a.Timeline)
	if len(b.Timeline) > 0 { // none of o's seconds: none to place after the shift
		n = max(n, len(b.Timeline)+shift)
	}
	sum.Timeline = make([]SessionSecond, n)
	for _, x := range []struct {
		t     []SessionSecond
		shift int
	}{{a.Timeline, 0}, {b.Timeline, shift}} {
		for i, sec := range x.t {
			sum.Timeline[i+x.shift].Started += sec.Started
			sum.Timeline[i+x.shift].Ended += sec.Ended
		}
	}
	var in int64
	for i := range sum.Timeline {
		sec := &sum.Timeline[i]
		in += sec.Started - sec.Ended
		sec.Second, sec.InProgress = i, in
	}
	return &sum
}

// merge adds o (the same part's stream figures in another shard) to s;
// either may be nil. The histograms are added without loss and the
// percentiles read from the sums.
func (s *PartStream) merge(o *PartStream, what string, m *merger) *PartStream {
	if s == nil && o == nil {
		return nil
	}
	var a, b PartStream
	if s != nil {
		a = *s
	}
	if o != nil {
		b = *o
	}
	a.Streamed += b.Streamed
	a.OutputTokens += b.OutputTokens
	h, oh := &a.Histograms, b.Histograms
	h.TTFTResponse, a.TTFTResponse = m.hist(h.TTFTResponse, oh.TTFTResponse, what+" ttft_response")
	h.TTFTService, a.TTFTService = m.hist(h.TTFTService, oh.TTFTService, what+" ttft_service")
	h.TPOT, a.TPOT = m.hist(h.TPOT, oh.TPOT, what+" tpot")
	a.PromptTokens = a.PromptTokens.merge(b.PromptTokens, m)
	a.CachedTokens = a.CachedTokens.merge(b.CachedTokens, m)
	return &a
}
