package result

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// StreamResult is a result's stream figures: TTFT from the schedule and
// from the send, ITL and TPOT (ms), the time to the first answer token
// from the schedule and from the send, the output tokens, their rate over
// the run, and goodput.
type StreamResult struct {
	TTFTResponse Percentiles `json:"ttft_response"`
	TTFTService  Percentiles `json:"ttft_service"`
	ITL          Percentiles `json:"itl"`
	TPOT         Percentiles `json:"tpot"`
	// TTFAResponse and TTFAService are the time to the first answer
	// token, after a reasoning model's thinking (recorder/stream.go);
	// empty in results written before they were kept.
	TTFAResponse Percentiles `json:"ttfa_response"`
	TTFAService  Percentiles `json:"ttfa_service"`
	OutputTokens int64       `json:"output_tokens"`
	TokensPerS   float64     `json:"tokens_per_s"`
	Goodput      *Goodput    `json:"goodput"` // null without --slo-request
	// PromptTokens are the sent requests' prompt tokens (the server's
	// usage count, else openload's own count of a prompt it made); nil
	// when none was known.
	PromptTokens *Tokens `json:"prompt_tokens,omitempty"`
	// CachedTokens are the prompt tokens the server said it read from
	// its prefix cache (usage.prompt_tokens_details.cached_tokens); nil
	// when no request had a count.
	CachedTokens *Tokens `json:"cached_tokens,omitempty"`
	// Asked are the output tokens requests asked for next to what they
	// got; nil when no body said.
	Asked *Asked `json:"output_tokens_asked,omitempty"`
}

// Tokens summarises one token count per request: the requests that had
// one, their sum, and the distribution from Histogram, an HdrHistogram
// of counts (values in tokens, exact to 3 significant digits) that
// merges without loss.
type Tokens struct {
	Requests  int64   `json:"requests"`
	Sum       int64   `json:"sum"`
	Min       int64   `json:"min"`
	P50       int64   `json:"p50"`
	Max       int64   `json:"max"`
	Mean      float64 `json:"mean"`
	Histogram string  `json:"histogram"`
}

// Asked compares the output tokens requests asked for (max_tokens or the
// server's name for it) with what they got: Received is the output
// tokens of the same requests, Short the completed ones that got fewer
// than they asked (a model that stopped at its end of sequence).
type Asked struct {
	Tokens
	Received int64 `json:"received"`
	Short    int64 `json:"short"`
}

// SummarizeTokens returns the summary of h, a histogram of token counts
// (openload's histogram range, NewHistogram, which holds any count) whose
// values sum to sum; nil when h is empty.
func SummarizeTokens(h *hdrhistogram.Histogram, sum int64) (*Tokens, error) {
	if h.TotalCount() == 0 {
		return nil, nil
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		return nil, err
	}
	return summarizeTokens(h, sum, enc), nil
}

func summarizeTokens(h *hdrhistogram.Histogram, sum int64, enc string) *Tokens {
	return &Tokens{
		Requests: h.TotalCount(), Sum: sum, Min: h.Min(), P50: h.ValueAtQuantile(50), Max: h.Max(),
		Mean: float64(sum) / float64(h.TotalCount()), Histogram: enc,
	}
}

// merge returns the sum of t and o, either of which may be nil.
func (t *Tokens) merge(o *Tokens, m *merger) *Tokens {
	if t == nil {
		return o
	}
	if o == nil {
		return t
	}
	enc, _ := m.hist(t.Histogram, o.Histogram, "tokens")
	h := m.sums[enc]
	if h == nil {
		return nil // m.err says why
	}
	return summarizeTokens(h, t.Sum+o.Sum, enc)
}

func (a *Asked) merge(o *Asked, m *merger) *Asked {
	if a == nil {
		return o
	}
	if o == nil {
		return a
	}
	t := a.Tokens.merge(&o.Tokens, m)
	if t == nil {
		return nil
	}
	return &Asked{Tokens: *t, Received: a.Received + o.Received, Short: a.Short + o.Short}
}

// Goodput is the rate of requests that met every per-request objective,
// next to the rate of completed requests (throughput), over the run's
// elapsed time.
type Goodput struct {
	Objectives  string  `json:"objectives"`
	Met         int64   `json:"met"`
	PerS        float64 `json:"per_s"`
	Throughput  float64 `json:"throughput_per_s"`
	MetFraction float64 `json:"met_share"` // of the scheduled requests
}

// merge adds o's stream counts to s's; the histograms are merged with the
// others (Histograms.merge) and the figures derived (derive). Every
// streamed shard judged goodput by the same objectives (sameSettings).
func (s *StreamResult) merge(o *StreamResult, m *merger) *StreamResult {
	if o == nil {
		return s
	}
	sum := StreamResult{}
	if s != nil {
		sum = *s
	} else if o.Goodput != nil {
		sum.Goodput = &Goodput{Objectives: o.Goodput.Objectives}
	}
	sum.OutputTokens += o.OutputTokens
	if sum.Goodput != nil && o.Goodput != nil {
		g := *sum.Goodput
		g.Met += o.Goodput.Met
		sum.Goodput = &g
	}
	sum.PromptTokens = sum.PromptTokens.merge(o.PromptTokens, m)
	sum.CachedTokens = sum.CachedTokens.merge(o.CachedTokens, m)
	sum.Asked = sum.Asked.merge(o.Asked, m)
	return &sum
}

// objectives are goodput's per-request objectives, "" without.
func (s *StreamResult) objectives() string {
	if s.Goodput == nil {
		return ""
	}
	return s.Goodput.Objectives
}

// SetRates sets the stream's token rate and goodput's rates over the
// run's elapsed seconds and its counts.
func (s *StreamResult) SetRates(elapsed float64, c Counts) {
	s.TokensPerS = 0
	if elapsed > 0 {
		s.TokensPerS = float64(s.OutputTokens) / elapsed
	}
	g := s.Goodput
	if g == nil {
		return
	}
	g.PerS, g.Throughput, g.MetFraction = 0, 0, 0
	if elapsed > 0 {
		g.PerS = float64(g.Met) / elapsed
		g.Throughput = float64(c.Completed) / elapsed
	}
	if c.Scheduled > 0 {
		g.MetFraction = float64(g.Met) / float64(c.Scheduled)
	}
}
