package result

// ClientError reports whether an answer's status says the request was
// refused as wrong: a 4xx other than 408 and 429, which say the server
// could not take it then, not that it was wrong. The engine keeps the
// first such answer's body (Refusal), and the default objective
// client_errors counts them (package verify).
func ClientError(code int) bool {
	return code >= 400 && code < 500 && code != 408 && code != 429
}

// Refusal is a run's first refused answer: of the requests answered with
// a client error (ClientError) and read to their end, the one scheduled first
// (the lowest seq), with the first 512 bytes of its body as they came
// (the transfer's framing undone). Cut says the body was longer. It is
// what the verdict quotes when the target refused the requests: the
// server's own words ("you must provide a model parameter").
type Refusal struct {
	Seq    uint64 `json:"seq"`
	Status int    `json:"status"`
	Body   string `json:"body"`
	Cut    bool   `json:"cut,omitempty"`
}

// merge keeps the refusal of the request scheduled first: shards number
// their requests in the whole schedule, so the merge keeps what one
// generator would have. Scenarios number theirs each from 0: on a tie
// the first kept stays (Union adds them in order).
func (r *Refusal) merge(o *Refusal) *Refusal {
	if r == nil || (o != nil && o.Seq < r.Seq) {
		return o
	}
	return r
}
