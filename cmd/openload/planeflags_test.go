package main

import (
	"strings"
	"testing"
)

// Bad values of the borrowed plane's flags stop `openload stub` with a
// one-line error that names the flag, then the help hint.
func TestStubPlaneFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shadow-share", "1.5"}, "--shadow-share must be in 0..1, got 1.5"},
		{[]string{"--shadow-share", "NaN"}, "--shadow-share must be in 0..1"},
		{[]string{"--fence", "none"}, `--fence "none" is unknown (known: shared, per-plane)`},
		{[]string{"--primary-fail", "-0.1"}, "--primary-fail must be in 0..1"},
		{[]string{"--borrow-fail", "2"}, "--borrow-fail must be in 0..1"},
		{[]string{"--primary-budget", "-1"}, "--primary-budget must be >= 0, got -1"},
		{[]string{"--borrow-workers", "0"}, "--borrow-workers must be >= 1, got 0"},
		{[]string{"--borrow-depth", "0"}, "--borrow-depth must be >= 1"},
		{[]string{"--borrow-budget", "-2"}, "--borrow-budget must be >= 0"},
		{[]string{"--borrow-slow-factor", "0"}, "--borrow-slow-factor must be >= 1"},
		{[]string{"--borrow-latency", "-1ms"}, "--borrow-latency must be >= 0"},
		{[]string{"--budget-window", "0s"}, "--budget-window must be > 0"},
		{[]string{"--health-every", "0s"}, "--health-every must be > 0"},
		{[]string{"--health-max-age", "-1s"}, "--health-max-age must be > 0"},
		{[]string{"--plane-faults", "stale-health@5s"}, `--plane-faults "stale-health@5s": stale-health needs +LENGTH`},
		{[]string{"--plane-faults", "revision@5s+1s"}, "revision is an instant"},
		{[]string{"--plane-faults", "meteor@1s+1s"}, `unknown fault "meteor"`},
		{[]string{"--plane-faults", "late-score@x+1s"}, `start "x" is not a duration`},
		{[]string{"--plane-faults", "borrow-slow@1s+0s"}, `length "0s" is not a duration > 0`},
		{[]string{"--plane-faults", "borrow-slow"}, "want KIND@START+LENGTH"},
	} {
		code, stdout, stderr := runCLI(append([]string{"stub"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != exitUsage || stdout != "" || len(lines) != 2 || !strings.Contains(lines[0], c.want) ||
			lines[1] != "run 'openload stub --help' for usage" {
			t.Errorf("stub %q: exit %d, stdout %q, stderr %q; want exit %d and a one-line error containing %q",
				c.args, code, stdout, stderr, exitUsage, c.want)
		}
	}
}
