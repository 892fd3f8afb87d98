package recorder

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Answers, from the recorder's side.
//
// The response histogram holds every request, those that got no answer
// (an error, a timeout, unfinished) at the time they took to fail: a user
// waited that long to see the error, and a timed-out or unfinished request
// left out would bring coordinated omission back. But when most requests
// failed at once (a refused port, an untrusted certificate), its
// percentiles read like a fast service. So the recorder also keeps the
// response times of the requests without an answer, and the report sets
// them apart from those of the answered ones:
//
//	response   = answered ∪ unanswered   (what it always was)
//	answered   = requests that completed, with any status
//	unanswered = errors, timeouts, unfinished: time to the failure
//
// Only the unanswered histogram is recorded, and only once a request fails,
// so a healthy run pays nothing; the answered one is the response
// histogram minus it, bucket by bucket.

// addUnanswered records the response time of rec when it got no answer;
// addFaults calls it.
func (t *faultTally) addUnanswered(rec *Record) {
	if rec.Outcome == Completed {
		return
	}
	if t.unanswered == nil {
		t.unanswered = result.NewHistogram()
	}
	// Clamped as the response histogram clamps it (counted there), so
	// that Answered's subtraction leaves no bucket negative.
	recordClamped(t.unanswered, rec.Response())
}

// Answered returns the response times of the requests that got an answer
// and, apart, of those that did not (the time each took to fail). Both are
// nil when every request got an answer.
func (r *Recorder) Answered() (answered, unanswered *hdrhistogram.Histogram) {
	u := r.faults.unanswered
	if u == nil {
		return nil, nil
	}
	return result.Subtract(r.Response, u), u
}

// fillAnswered sets the answered and unanswered figures of res (nil and
// empty when every request got an answer).
func (r *Recorder) fillAnswered(res *result.Result) error {
	res.Answered, res.Unanswered = nil, nil
	res.Histograms.Answered, res.Histograms.Unanswered = "", ""
	a, u := r.Answered()
	if u == nil {
		return nil
	}
	pa, pu := result.Summarize(a), result.Summarize(u)
	res.Answered, res.Unanswered = &pa, &pu
	var err error
	if res.Histograms.Answered, err = result.EncodeHistogram(a); err != nil {
		return err
	}
	res.Histograms.Unanswered, err = result.EncodeHistogram(u)
	return err
}
