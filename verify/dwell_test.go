package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// A replay is exact: scheduled must equal the file's count.
func TestReplayScheduleIsExact(t *testing.T) {
	res := good()
	res.Config.Arrival = "replay"
	f := find(t, Run(res, Options{}), "schedule")
	if f.Severity != Pass || f.Message != "scheduled 30 = the arrivals of the replayed file" {
		t.Errorf("replay, all scheduled: %+v", f)
	}
	res.Counts.Expected = 31
	f = find(t, Run(res, Options{}), "schedule")
	if f.Severity != Fail || f.Message != "scheduled 30 ≠ the 31 arrivals of the replayed file" {
		t.Errorf("replay, one missing: %+v", f)
	}
}

// The dwell bound describes the server: it warns, never fails.
func TestDwellBoundFinding(t *testing.T) {
	tests := []struct {
		d    *result.DwellBound
		sev  Severity
		want string
	}{
		{nil, "", ""},
		{&result.DwellBound{Bound: "150ms", Answers: 812, Others: 790, Dwell: result.Percentiles{Max: 149.9}}, Pass,
			"0 of 812 answers reported dwell > 150ms (max 149.900 ms); 790 responses that are not answers (drops, errors, 204) reported a dwell too and are not checked"},
		{&result.DwellBound{Bound: "100ms", Answers: 500, Over: 37, Dwell: result.Percentiles{Max: 312}}, Warn,
			"37 of 500 answers reported dwell > 100ms (max 312.000 ms): the server let answers out older than the bound"},
		{&result.DwellBound{Bound: "100ms", Answers: 10, Unreported: 3}, Warn,
			"0 of 10 answers reported dwell > 100ms (max 0.000 ms); 3 more answers reported no dwell and could not be checked"},
		{&result.DwellBound{Bound: "100ms", Unreported: 30}, Warn,
			"none of 30 answers reported a Server-Timing dwell metric: the bound 100ms could not be checked"},
		{&result.DwellBound{Bound: "100ms", Others: 4}, Warn,
			"no answer (2xx but 204) to check against 100ms; 4 responses that are not answers (drops, errors, 204) reported a dwell too and are not checked"},
	}
	for _, tc := range tests {
		res := good()
		res.DwellBound = tc.d
		fs := Run(res, Options{})
		if tc.d == nil {
			for _, f := range fs {
				if f.Check == "dwell bound" {
					t.Errorf("a finding without --dwell-bound: %+v", f)
				}
			}
			continue
		}
		f := find(t, fs, "dwell bound")
		if f.Severity != tc.sev || f.Message != tc.want {
			t.Errorf("%+v:\n got %s %q\nwant %s %q", *tc.d, f.Severity, f.Message, tc.sev, tc.want)
		}
		if Worst(fs) == Fail || strings.Contains(f.Message, "\n") {
			t.Errorf("%+v: fails the run or spans lines", *tc.d)
		}
	}
}
