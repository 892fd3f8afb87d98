package result

// Counts are the run's accounting. Expected is rate × duration for the
// schedule (a real number for Poisson arrivals).
//
// In a closed run paced to a rate, Expected is what the pacing schedule
// would have sent, Scheduled the requests the users actually issued (each
// with its slot as scheduled time) and Skipped the slots no user took
// because each was still waiting for an earlier response, so that
// Scheduled + Skipped = ⌊rate × duration⌋. A closed run without a rate has
// no schedule: Expected is 0 and means unknown (Result.ExpectedKnown). The
// identity completed + errors + timeouts + unfinished == scheduled holds in
// every mode: skipped slots are not requests and have no outcome.
type Counts struct {
	Expected   float64 `json:"expected"`
	Scheduled  int64   `json:"scheduled"`
	Sent       int64   `json:"sent"`
	Completed  int64   `json:"completed"`
	Errors     int64   `json:"errors"`
	Timeouts   int64   `json:"timeouts"`
	Unfinished int64   `json:"unfinished"`
	Skipped    int64   `json:"skipped,omitempty"` // closed mode: never sent
}

// Balanced reports whether completed + errors + timeouts + unfinished ==
// scheduled.
func (c Counts) Balanced() bool {
	return c.Completed+c.Errors+c.Timeouts+c.Unfinished == c.Scheduled
}

// Second is one second of the run's timeline: how many requests were due,
// left the generator, completed (read a response) and ended in an error or
// timeout during that second. Index i covers [i s, (i+1) s) from the start.
//
// Skipped counts, for a closed run paced to a rate, the slots of the pacing
// schedule due in that second that no user took because each was still
// waiting for an earlier response: the requests a closed-loop tool never
// sends. What the schedule called for in the second is Scheduled + Skipped.
type Second struct {
	Scheduled int64 `json:"scheduled"`
	Sent      int64 `json:"sent"`
	Completed int64 `json:"completed"`
	Errors    int64 `json:"errors"`
	Skipped   int64 `json:"skipped,omitempty"`
	// ResponseP99 is the response-time p99 (ms) of the requests that
	// completed (or ended) in this second.
	ResponseP99 float64 `json:"response_p99_ms,omitempty"`
	// Retries counts the retries sent in this second and RateLimited the
	// 429 answers received in it, every attempt counted (see retry.go).
	Retries     int64 `json:"retries,omitempty"`
	RateLimited int64 `json:"rate_limited,omitempty"`
	// Tokens counts the content events of streamed answers that arrived
	// in this second (stream.go).
	Tokens int64 `json:"tokens,omitempty"`
	// Classes counts, per class header, the requests that ended in this
	// second by the header's value (classsec.go): header → value → count.
	Classes map[string]map[string]int64 `json:"classes,omitempty"`
}

// Due is what the schedule called for in the second: Scheduled + Skipped.
func (s Second) Due() int64 { return s.Scheduled + s.Skipped }

// AddClass adds n to the second's count of header = value.
func (s *Second) AddClass(header, value string, n int64) {
	if s.Classes == nil {
		s.Classes = map[string]map[string]int64{}
	}
	m := s.Classes[header]
	if m == nil {
		m = map[string]int64{}
		s.Classes[header] = m
	}
	m[value] += n
}

// merge sums the counts; Expected comes from the shards' own runs
// (Result.derive).
func (c Counts) merge(o Counts) Counts {
	c.Scheduled += o.Scheduled
	c.Sent += o.Sent
	c.Completed += o.Completed
	c.Errors += o.Errors
	c.Timeouts += o.Timeouts
	c.Unfinished += o.Unfinished
	c.Skipped += o.Skipped
	return c
}

// mergeTimelines adds b, whose second 0 is shift seconds after a's, to a,
// second by second, into a new timeline (never nil). A second's response
// p99 cannot be added and is dropped.
func mergeTimelines(a, b []Second, shift int) []Second {
	out := make([]Second, max(len(a), len(b)+shift))
	for i := range a {
		out[i].add(a[i])
	}
	for i := range b {
		out[i+shift].add(b[i])
	}
	return out
}

// add adds o's counts to s's, its class counts included.
func (s *Second) add(o Second) {
	s.Scheduled += o.Scheduled
	s.Sent += o.Sent
	s.Completed += o.Completed
	s.Errors += o.Errors
	s.Skipped += o.Skipped
	s.Retries += o.Retries
	s.RateLimited += o.RateLimited
	s.Tokens += o.Tokens
	for h, vs := range o.Classes {
		for v, n := range vs {
			s.AddClass(h, v, n)
		}
	}
}
