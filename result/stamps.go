package result

// Stamps is the check of every record's stamps (recorder/stamps.go): a
// record is in order when
//
//	scheduled ≤ sent ≤ last sent ≤ first byte ≤ first token ≤ first answer
//	  ≤ last token ≤ done
//
// for the stamps it has. Disordered ≤ Checked ≤ Counts.Scheduled (every
// record is checked, warm-up included; fewer in a merge with a part
// written before the check); a run with Disordered > 0
// was timed wrongly by its client and fails (verify). Nil in results
// written before the check.
type Stamps struct {
	Checked    int64 `json:"checked"`
	Disordered int64 `json:"disordered"`
	// Breaks counts the records out of order by the pair found out of
	// order, "done<last_token" for a done before the last token (a record
	// may count under several pairs).
	Breaks map[string]int64 `json:"breaks,omitempty"`
	// WorstMs is the most a stamp came before the one it should follow,
	// and WorstSeq the request it came in (its index in the schedule).
	WorstMs  float64 `json:"worst_ms,omitempty"`
	WorstSeq uint64  `json:"worst_seq,omitempty"`
}

// StampBreak names a break of the order: stamp early came before stamp
// late, which it should follow.
func StampBreak(early, late string) string { return early + "<" + late }

// merge sums the checks; the worst break is the larger one's. A part
// written before the check adds nothing, so that Checked < the requests
// says the whole was not all checked (verify).
func (s *Stamps) merge(o *Stamps) *Stamps {
	if o == nil {
		return s
	}
	var sum Stamps
	if s != nil {
		sum = *s
	}
	sum.Checked += o.Checked
	sum.Disordered += o.Disordered
	if o.WorstMs > sum.WorstMs {
		sum.WorstMs, sum.WorstSeq = o.WorstMs, o.WorstSeq
	}
	sum.Breaks = addCounts(sum.Breaks, o.Breaks)
	return &sum
}
