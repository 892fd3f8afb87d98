package loadtest

import (
	"github.com/openload/openload/recorder"
)

// fillRetries stores the retry policy and the attempt counts in res when
// the run retries (Options.Retry); a run without retries keeps neither, and
// its statuses already count every attempt.
func (o *Options) fillRetries(res *recorder.Result, rec *recorder.Recorder) {
	if !o.Retry.Enabled() {
		return
	}
	c := rec.RetryCounts()
	c.Policy = o.Retry.String()
	res.Config.Retry = c.Policy
	res.Retries = &c
}
