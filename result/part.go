package result

import (
	"fmt"
	"slices"
	"strconv"
)

// A part of a run is a subset of its requests with figures of its own: a
// target of a request mix (Result.Targets), and later a scenario of a run
// of several arrival processes. One type for both, so that the recorder,
// the merge, the report and the objectives handle any part alike.
//
// A part holds the headline's requests only: a warm-up's requests are in
// the run's counts (Result.Warmup) and in no part, as they are in no
// headline figure. So the parts of a run add up to Result.Headline().

// Part is the figures of one part of a run, as the run's are: its
// accounting, the statuses of its completed responses, its error kinds,
// and its response, service and send-delay times with their histograms.
type Part struct {
	Name       string           `json:"name"`
	Counts     PartCounts       `json:"counts"`
	Status     map[string]int64 `json:"status"`
	ErrorKinds map[string]int64 `json:"error_kinds"`
	Response   Percentiles      `json:"response"`
	Service    Percentiles      `json:"service"`
	SendDelay  Percentiles      `json:"send_delay"`
	Histograms PartHistograms   `json:"histograms"`
	// Stream holds the part's stream figures (session.go); nil when none
	// of its requests streamed.
	Stream *PartStream `json:"stream,omitempty"`
}

// PartCounts are a part's accounting: Counts without Expected and
// Skipped, which a schedule has and a part of it has not (a drawn mix
// has no exact expected count per target).
type PartCounts struct {
	Scheduled  int64 `json:"scheduled"`
	Sent       int64 `json:"sent"`
	Completed  int64 `json:"completed"`
	Errors     int64 `json:"errors"`
	Timeouts   int64 `json:"timeouts"`
	Unfinished int64 `json:"unfinished"`
}

// PartHistograms are a part's encoded histograms (EncodeHistogram), values
// in µs, so that shards' parts merge without loss.
type PartHistograms struct {
	Response  string `json:"response"`
	Service   string `json:"service"`
	SendDelay string `json:"send_delay"`
}

// Balanced reports whether completed + errors + timeouts + unfinished ==
// scheduled.
func (c PartCounts) Balanced() bool { return c.Counts().Balanced() }

// Counts is c as a run's Counts (Expected and Skipped 0), for what reads
// a run's.
func (c PartCounts) Counts() Counts {
	return Counts{Scheduled: c.Scheduled, Sent: c.Sent, Completed: c.Completed, Errors: c.Errors, Timeouts: c.Timeouts, Unfinished: c.Unfinished}
}

// PartCountsOf is a run's counts as a part's.
func PartCountsOf(c Counts) PartCounts {
	return PartCounts{Scheduled: c.Scheduled, Sent: c.Sent, Completed: c.Completed, Errors: c.Errors, Timeouts: c.Timeouts, Unfinished: c.Unfinished}
}

// merge sums the counts, as a run's (Counts.merge).
func (c PartCounts) merge(o PartCounts) PartCounts {
	return PartCountsOf(c.Counts().merge(o.Counts()))
}

// PartNames are the names of parts, in their order.
func PartNames(parts []Part) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Name
	}
	return out
}

// Part returns the part of r named name (a target of its mix, or a
// step of its sessions), or nil.
func (r *Result) Part(name string) *Part {
	for _, parts := range [][]Part{r.Targets, r.Steps} {
		for i := range parts {
			if parts[i].Name == name {
				return &parts[i]
			}
		}
	}
	return nil
}

// mergeParts adds b's parts to a's, part by part. Shards of one run have
// the same parts in the same order (sameSettings refuses others), so part
// i is the same part in both; a sum with none yet takes b's names.
// Percentiles come from the merged histograms.
func mergeParts(a, b []Part, what string, m *merger) []Part {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	if len(a) == 0 {
		a = make([]Part, len(b))
		for i := range b {
			a[i].Name = b[i].Name
		}
	}
	if !slices.Equal(PartNames(a), PartNames(b)) {
		m.fail("%s %q, but the merge so far has %q: not a shard of the same run", what, PartNames(b), PartNames(a))
		return a
	}
	out := make([]Part, len(a))
	for i := range a {
		out[i] = a[i].merge(b[i], what+" "+strconv.Quote(a[i].Name), m)
	}
	return out
}

// merge adds o (the same part of another shard) to p.
func (p Part) merge(o Part, what string, m *merger) Part {
	p.Counts = p.Counts.merge(o.Counts)
	p.Status = orEmpty(addCounts(p.Status, o.Status))
	p.ErrorKinds = orEmpty(addCounts(p.ErrorKinds, o.ErrorKinds))
	h, oh := &p.Histograms, o.Histograms
	h.Response, p.Response = m.hist(h.Response, oh.Response, what+" response")
	h.Service, p.Service = m.hist(h.Service, oh.Service, what+" service")
	h.SendDelay, p.SendDelay = m.hist(h.SendDelay, oh.SendDelay, what+" send_delay")
	p.Stream = p.Stream.merge(o.Stream, what+" stream", m) // session.go
	return p
}

// partsSetting is the names of a run's parts as sameSettings compares
// them: quoted, since a name may hold any character.
func partsSetting(parts []Part) string { return fmt.Sprintf("%q", PartNames(parts)) }
