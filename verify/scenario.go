package verify

import (
	"fmt"
	"strings"

	"github.com/openload/openload/result"
)

// A run of scenarios (result.Union): each scenario is a run of its own
// whose checks were made on its own result; the whole is checked again
// as one run, except its count, which is no single schedule's: it must
// be the sum of the scenarios' counts, each checked against its own
// ∫λ dt (exact for a constant schedule, within its draw's spread for a
// Poisson one).

// scenariosCount is the schedule check of a union of scenarios.
func scenariosCount(res *result.Result) Finding {
	f := Finding{Check: "schedule", Severity: Pass}
	var sum int64
	parts := make([]string, 0, len(res.Scenarios))
	for _, sc := range res.Scenarios {
		own := scheduleCount(sc.Result)
		sum += sc.Result.Counts.Scheduled
		parts = append(parts, sc.Name+": "+own.Message)
		f.Severity = worse(f.Severity, own.Severity)
	}
	if sum != res.Counts.Scheduled {
		f.Severity = Fail
		f.Message = fmt.Sprintf("scheduled %d ≠ %d, the sum of the %d scenarios' (%s)", res.Counts.Scheduled, sum, len(res.Scenarios), strings.Join(parts, " · "))
		return f
	}
	f.Message = fmt.Sprintf("scheduled %d = the sum of %d scenarios, each against its own schedule: %s", sum, len(res.Scenarios), strings.Join(parts, " · "))
	return f
}

// scenarioChecks says whether every scenario passed its own checks (its
// schedule, timeline, send delay, …), naming those that did not.
func scenarioChecks(res *result.Result) (Finding, bool) {
	if len(res.Scenarios) == 0 {
		return Finding{}, false
	}
	f := Finding{Check: "scenarios", Severity: Pass}
	var bad []string
	n := 0
	for _, sc := range res.Scenarios {
		for _, c := range sc.Result.Checks {
			n++
			s := Severity(c.Severity)
			if s == Pass {
				continue
			}
			f.Severity = worse(f.Severity, s)
			bad = append(bad, fmt.Sprintf("%s %s %s: %s", sc.Name, strings.ToUpper(c.Severity), c.Name, c.Message))
		}
	}
	if len(bad) == 0 {
		f.Message = fmt.Sprintf("each of %d scenarios passed all its own checks (%d in all)", len(res.Scenarios), n)
		return f, true
	}
	f.Message = strings.Join(bad, " · ")
	return f, true
}

// worse is the more severe of a and b.
func worse(a, b Severity) Severity {
	if a == Fail || b == Fail {
		return Fail
	}
	if a == Warn || b == Warn {
		return Warn
	}
	return Pass
}
