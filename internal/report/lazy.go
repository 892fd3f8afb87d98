package report

import (
	"fmt"
	"io"

	"github.com/openload/openload/result"
)

// lazyLines say what reading the targets as the run sent them did to it
// (result.Lazy): the requests that waited for their target, whose wait
// is in their send delay, and the schedule's stop when the targets ran
// out or ended at an error, which is why the run ended early.
func lazyLines(w io.Writer, width int, res *result.Result) {
	l := res.Lazy
	if l == nil {
		return
	}
	if l.Waited > 0 {
		wrapped(w, width, "targets  ", fmt.Sprintf("read as the run sent them: %d request(s) came due before their target was read (the wait is in their send delay)", l.Waited))
	}
	if !l.Ended {
		return
	}
	never := max(int64(res.Counts.Expected)-res.Counts.Scheduled, 0)
	if l.Error != "" {
		wrapped(w, width, "run      ", fmt.Sprintf("TARGETS ENDED AT AN ERROR at %.1f s: %d requests scheduled (all accounted for above), %d never scheduled: %s", l.AtS, res.Counts.Scheduled, never, l.Error))
		return
	}
	wrapped(w, width, "run      ", fmt.Sprintf("TARGETS RAN OUT at %.1f s: %d requests scheduled, one per target (all accounted for above), %d never scheduled", l.AtS, res.Counts.Scheduled, never))
}
