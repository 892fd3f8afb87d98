package result

// StreamResult is a result's stream figures: TTFT from the schedule and
// from the send, ITL and TPOT (ms), the output tokens, their rate over the
// run, and goodput.
type StreamResult struct {
	TTFTResponse Percentiles `json:"ttft_response"`
	TTFTService  Percentiles `json:"ttft_service"`
	ITL          Percentiles `json:"itl"`
	TPOT         Percentiles `json:"tpot"`
	OutputTokens int64       `json:"output_tokens"`
	TokensPerS   float64     `json:"tokens_per_s"`
	Goodput      *Goodput    `json:"goodput"` // null without --slo-request
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
func (s *StreamResult) merge(o *StreamResult) *StreamResult {
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
