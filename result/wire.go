package result

// Wire is what went onto connections during a run.
type Wire struct {
	// Attempts is the number of times requests were written to a
	// connection: first attempts, re-sends and retries. A server that
	// logs every request it reads logs this many.
	Attempts int64 `json:"attempts"`
	// Resends is the number of times the client re-sent a request on its
	// own (a kept-alive connection failed before answering), and Resent
	// the requests re-sent at least once.
	Resends int64 `json:"resends"`
	Resent  int64 `json:"resent_requests"`
	// The attempts that got no answer and the re-sends by cause, summed
	// (Unanswered, above): Closed and Silent are written attempts the
	// server may not have read, so that Attempts − Closed − Silent ≤ the
	// requests it read ≤ Attempts; ResendsWritten are the re-sends after
	// a Closed attempt, ResendsUnwritten those after an attempt none of
	// whose bytes were written. Counted is false in results written
	// before they were, which hold none of them.
	Closed           int64 `json:"unanswered_closed"`
	Silent           int64 `json:"unanswered_silent"`
	ResendsWritten   int64 `json:"resends_written"`
	ResendsUnwritten int64 `json:"resends_unwritten"`
	Counted          bool  `json:"unanswered_counted"`
	// Bytes is what openload wrote to its connections and read from
	// them; nil in results written before they were counted, or merged
	// with one.
	Bytes *Bytes `json:"bytes,omitempty"`
}

// Bytes counts the bytes that crossed openload's connections, every
// attempt, re-send and connection setup included; over TLS the TCP
// connection's, handshakes and record framing included.
type Bytes struct {
	Written int64 `json:"written"`
	Read    int64 `json:"read"`
}

// merge adds o's counts to w's (a merge of shards); the unanswered
// attempts are counted only when both counted them.
func (w *Wire) merge(o *Wire) *Wire {
	if o == nil {
		return w
	}
	sum := Wire{Counted: true}
	if w != nil {
		sum = *w
	} else if o.Bytes != nil {
		sum.Bytes = &Bytes{}
	}
	sum.add(o)
	return &sum
}

func (w *Wire) add(o *Wire) {
	w.Attempts += o.Attempts
	w.Resends += o.Resends
	w.Resent += o.Resent
	w.Closed += o.Closed
	w.Silent += o.Silent
	w.ResendsWritten += o.ResendsWritten
	w.ResendsUnwritten += o.ResendsUnwritten
	w.Counted = w.Counted && o.Counted
	if w.Bytes != nil && o.Bytes != nil {
		w.Bytes = &Bytes{Written: w.Bytes.Written + o.Bytes.Written, Read: w.Bytes.Read + o.Bytes.Read}
	} else {
		w.Bytes = nil // unknown for a part: unknown for the whole
	}
}

// Unread is how many of the attempts the server may not have read: those
// that got no byte of an answer (see above).
func (w *Wire) Unread() int64 { return w.Closed + w.Silent }
