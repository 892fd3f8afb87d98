package verify

import (
	"fmt"
	"math"

	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// The throughput probe (rate inf, schedule.AtOnce) schedules every
// request at offset 0 and lets the connection limit pace them: its count
// is the one asked for, and the wait for a connection is the queue it
// made on purpose. Its checks say so rather than call the sends late.

// atOnce reports whether res is a throughput probe.
func atOnce(res *result.Result) bool {
	return res.Config.Arrival == schedule.AtOnce && !res.Closed()
}

// atOnceCount is the probe's schedule check: scheduled must be the count
// asked for (the result's expected count), exactly.
func atOnceCount(res *result.Result) Finding {
	c := res.Counts
	want := int64(math.Floor(c.Expected + 1e-9))
	if c.Scheduled != want {
		return Finding{Check: "schedule", Severity: Fail, Message: fmt.Sprintf("scheduled %d ≠ the %d asked for at once (rate inf)", c.Scheduled, want)}
	}
	return Finding{Check: "schedule", Severity: Pass, Message: fmt.Sprintf("scheduled %d = the %d asked for, all due at offset 0 (rate inf)", c.Scheduled, want)}
}

// atOnceDips is the probe's send-dips check: every request was due in
// second 0, so each second sent what the connections let through.
func atOnceDips(res *result.Result) Finding {
	return Finding{Check: "send dips", Severity: Pass,
		Message: fmt.Sprintf("all %d due at offset 0 (rate inf): each second sent what %d connections let through, by design", res.Counts.Scheduled, res.Limit.Connections)}
}

// atOnceSendDelay is the probe's send-delay check once the limit bound:
// the delay is each request's wait for a connection, the probe's queue.
func atOnceSendDelay(res *result.Result) Finding {
	return Finding{Check: "send delay", Severity: Pass,
		Message: fmt.Sprintf("p50 %s, p99 %s: the queue the probe made by design, all %d due at once (rate inf) and at most %d in flight, each waiting its turn for a connection",
			fmtMs(res.SendDelay.P50), fmtMs(res.SendDelay.P99), res.Counts.Scheduled, res.Limit.Connections)}
}

// atOnceLimit is the probe's connection-limit check once it bound.
func atOnceLimit(res *result.Result) Finding {
	l := res.Limit
	return Finding{Check: "connection limit", Severity: Pass,
		Message: fmt.Sprintf("bound by design (rate inf): %d of %d requests waited for one of %d connections, in send delay (max %d in flight)",
			l.Waited, res.Counts.Scheduled, l.Connections, l.MaxInFlight)}
}
