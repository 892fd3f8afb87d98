package loadtest

import (
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// fillRetries stores the attempt counts and the retry policy in res when
// the run retries (Options.Retry; resultConfig records the policy too); a
// run without retries keeps neither, and its statuses already count every
// attempt.
func (o *Options) fillRetries(res *result.Result, rec *recorder.Recorder) {
	if !o.Retry.Enabled() {
		return
	}
	c := rec.RetryCounts()
	c.Policy = o.Retry.String()
	res.Retries = &c
}
