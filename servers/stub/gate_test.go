package stub

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	const ms = time.Millisecond
	busy := func(queue int) gateInput {
		return gateInput{Queue: queue, InModel: 4, Workers: 4, QueueCap: 16, Budget: 100 * ms}
	}
	with := func(in gateInput, f func(*gateInput)) gateInput { f(&in); return in }
	cases := []struct {
		name   string
		policy Policy
		in     gateInput
		admit  bool
		reason Reason
	}{
		// A free worker admits whatever the policy and estimate say.
		{"free worker none", PolicyNone, gateInput{InModel: 3, Workers: 4}, true, ""},
		{"free worker bounded", PolicyBounded, gateInput{InModel: 3, Workers: 4, QueueCap: 1}, true, ""},
		{"free worker admission ignores estimate", PolicyAdmission,
			gateInput{InModel: 0, Workers: 4, Estimate: time.Hour, Budget: ms}, true, ""},

		{"none long queue", PolicyNone, busy(10000), true, ""},

		// bounded: finding QueueCap waiting rejects, QueueCap-1 joins.
		{"bounded empty queue all busy", PolicyBounded, busy(0), true, ""},
		{"bounded cap-1 joins", PolicyBounded, busy(15), true, ""},
		{"bounded exactly at cap rejects", PolicyBounded, busy(16), false, ReasonQueueFull},
		{"bounded above cap rejects", PolicyBounded, busy(17), false, ReasonQueueFull},
		{"bounded cap 1, one waiting", PolicyBounded, with(busy(1), func(g *gateInput) { g.QueueCap = 1 }), false, ReasonQueueFull},
		{"bounded ignores estimate", PolicyBounded, with(busy(1), func(g *gateInput) { g.Estimate = time.Hour }), true, ""},

		// admission: estimate exactly at budget admits, 1ns over rejects.
		{"admission below budget", PolicyAdmission, with(busy(5), func(g *gateInput) { g.Estimate = 99 * ms }), true, ""},
		{"admission exactly at budget admits", PolicyAdmission, with(busy(5), func(g *gateInput) { g.Estimate = 100 * ms }), true, ""},
		{"admission 1ns over budget rejects", PolicyAdmission, with(busy(5), func(g *gateInput) { g.Estimate = 100*ms + 1 }), false, ReasonOverBudget},
		{"admission ignores queue cap", PolicyAdmission, with(busy(100), func(g *gateInput) { g.QueueCap = 1 }), true, ""},
		{"admission workers busy, no queue, estimate 0", PolicyAdmission, busy(0), true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			admit, reason := decide(tc.policy, tc.in)
			if admit != tc.admit || reason != tc.reason {
				t.Errorf("decide(%s, %+v) = (%v, %q), want (%v, %q)", tc.policy, tc.in, admit, reason, tc.admit, tc.reason)
			}
		})
	}
}

// The gate input as the server builds it, with the believed estimator: the
// budget boundary lands exactly on a whole number of waiting requests.
func TestDecideBelievedBoundary(t *testing.T) {
	const workers, believed, budget = 2, 50 * time.Millisecond, 100 * time.Millisecond
	for queue, want := range []bool{true, true, true, true, true, false, false} {
		// queue 4: 4×50ms/2 = 100ms = budget → admitted; queue 5: 125ms → rejected.
		est := believedWait(queue, workers, believed)
		admit, _ := decide(PolicyAdmission, gateInput{Queue: queue, InModel: workers, Workers: workers, Estimate: est, Budget: budget})
		if admit != want {
			t.Errorf("queue %d (estimate %v): admit = %v, want %v", queue, est, admit, want)
		}
	}
}
