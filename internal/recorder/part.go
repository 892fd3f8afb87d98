package recorder

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Parts of a run (result.Part): the targets of a request mix, the steps
// of a session run (session.go). A part's live tally is a slice indexed
// by the record's index (Record.Target), so that Add makes no map lookup
// and no allocation for it: every histogram is made when the names are
// given, but for the stream figures' (partStream), made on the part's
// first record the run's stream figures take, so that a run of many
// parts that streams nothing does not hold them.

// MaxTargetParts bounds the targets a recorder tallies one by one: each
// part holds three histograms (about 0.2 MB each at openload's range), and
// a table of more rows says nothing a person reads. The targets from index
// MaxTargetParts−1 on share the last part, named result.OtherClass.
const MaxTargetParts = 128

// partTally is the recorder's side of one result.Part.
type partTally struct {
	name                         string
	outcomes                     [numOutcomes]int64
	sent                         int64
	kinds                        kindTally
	status                       statusTally
	response, service, sendDelay *hdrhistogram.Histogram
	stream                       *partStream // nil until the part's first record with stream figures
}

// partStream is a part's stream figures (result.PartStream): TTFT from
// the schedule and from the send and TPOT as the run's (firstToken), its
// output tokens, and the server's prompt and cached prompt token counts.
type partStream struct {
	streamed                        int64
	ttftResponse, ttftService, tpot *hdrhistogram.Histogram
	outputTokens                    int64
	prompt, cached                  *hdrhistogram.Histogram
	promptSum, cachedSum            int64
}

// partTallies are the parts of one kind (targets), by index.
type partTallies struct {
	n     int // the names given: an index at or past it is in no part
	parts []partTally
}

func newPartTallies(names []string, most int) partTallies {
	t := partTallies{n: len(names), parts: make([]partTally, min(len(names), most))}
	for i := range t.parts {
		t.parts[i] = partTally{name: names[i], response: result.NewHistogram(), service: result.NewHistogram(), sendDelay: result.NewHistogram()}
	}
	if len(names) > most {
		t.parts[most-1].name = result.OtherClass
	}
	return t
}

// TrackTargets keeps the figures of each target of a request mix
// (Result.Targets), names[i] being the name of the target of index i
// (Record.Target), and adds the target column to the per-request log.
// Records of an index past the names are in no target, which the
// per-target accounting shows. Call it before the first Add.
func (r *Recorder) TrackTargets(names []string) {
	r.targets = newPartTallies(names, MaxTargetParts)
	if r.log != nil && len(names) > 0 {
		r.log.target = true
	}
}

// add counts rec in the part of index i, if it has one.
func (t *partTallies) add(i int, rec *Record) {
	if i >= t.n {
		return
	}
	p := &t.parts[min(i, len(t.parts)-1)] // past the bound: the last part
	p.outcomes[rec.Outcome]++
	p.kinds[rec.Kind]++
	if rec.Outcome == Completed {
		p.status.add(rec.Status)
	}
	recordIn(p.response, rec.Response()) // clamped: counted once, by the run's
	if rec.WasSent {
		p.sent++
		recordIn(p.service, rec.Service())
		recordIn(p.sendDelay, rec.SendDelay())
	}
}

// addStream adds rec's stream figures to the part of index i, if it has
// one (Add, once the run's stream figures took rec). A part takes the
// records the run's TTFT takes, streamed or cut before their first token,
// so that its figures and the run's agree; a plain answer that only
// carried a prompt count is the run's alone.
func (t *partTallies) addStream(i int, rec *Record) {
	if i >= t.n || !rec.Streamed && rec.Outcome != TimedOut && rec.Outcome != Unfinished {
		return
	}
	p := &t.parts[min(i, len(t.parts)-1)]
	s := p.stream
	if s == nil {
		s = &partStream{ttftResponse: result.NewHistogram(), ttftService: result.NewHistogram(), tpot: result.NewHistogram(),
			prompt: result.NewHistogram(), cached: result.NewHistogram()}
		p.stream = s
	}
	var clamped int64 // counted once, in the run's stream figures
	if firstToken(s.ttftResponse, s.ttftService, s.tpot, rec, &clamped) {
		s.streamed++
	}
	s.outputTokens += int64(rec.Tokens)
	if rec.PromptTokens > 0 {
		s.promptSum += int64(rec.PromptTokens)
		recordCount(s.prompt, rec.PromptTokens)
	}
	if rec.CachedTokens > 0 {
		s.cachedSum += int64(rec.CachedTokens)
		recordCount(s.cached, rec.CachedTokens)
	}
}

// fill returns the part's stream figures as a result holds them; nil
// when it had none.
func (s *partStream) fill() (*result.PartStream, error) {
	if s == nil {
		return nil, nil
	}
	ps := &result.PartStream{Streamed: s.streamed, OutputTokens: s.outputTokens,
		TTFTResponse: result.Summarize(s.ttftResponse), TTFTService: result.Summarize(s.ttftService), TPOT: result.Summarize(s.tpot)}
	var err error
	if ps.PromptTokens, err = result.SummarizeTokens(s.prompt, s.promptSum); err != nil {
		return nil, err
	}
	if ps.CachedTokens, err = result.SummarizeTokens(s.cached, s.cachedSum); err != nil {
		return nil, err
	}
	for _, h := range []struct {
		dst *string
		h   *hdrhistogram.Histogram
	}{{&ps.Histograms.TTFTResponse, s.ttftResponse}, {&ps.Histograms.TTFTService, s.ttftService}, {&ps.Histograms.TPOT, s.tpot}} {
		if *h.dst, err = result.EncodeHistogram(h.h); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// fill returns the parts as a result holds them; nil for none.
func (t *partTallies) fill() ([]result.Part, error) {
	if len(t.parts) == 0 {
		return nil, nil
	}
	out := make([]result.Part, len(t.parts))
	for i := range t.parts {
		p := &t.parts[i]
		o := p.outcomes
		c := result.PartCounts{Sent: p.sent, Completed: o[Completed], Errors: o[Failed], Timeouts: o[TimedOut], Unfinished: o[Unfinished]}
		c.Scheduled = c.Completed + c.Errors + c.Timeouts + c.Unfinished
		rp := result.Part{Name: p.name, Counts: c, Status: map[string]int64{}, ErrorKinds: map[string]int64{},
			Response: result.Summarize(p.response), Service: result.Summarize(p.service), SendDelay: result.Summarize(p.sendDelay)}
		p.status.addTo(rp.Status)
		p.kinds.addTo(rp.ErrorKinds)
		for _, h := range []struct {
			dst *string
			h   *hdrhistogram.Histogram
		}{{&rp.Histograms.Response, p.response}, {&rp.Histograms.Service, p.service}, {&rp.Histograms.SendDelay, p.sendDelay}} {
			var err error
			if *h.dst, err = result.EncodeHistogram(h.h); err != nil {
				return nil, fmt.Errorf("part %q: %w", p.name, err)
			}
		}
		var err error
		if rp.Stream, err = p.stream.fill(); err != nil {
			return nil, fmt.Errorf("part %q: %w", p.name, err)
		}
		out[i] = rp
	}
	return out, nil
}
