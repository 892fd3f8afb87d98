package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestStampsCheck: a record out of order fails the run and the finding
// names the pair, the worst break and the client; no records is no pass;
// a result written before the check has no finding.
func TestStampsCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *result.Stamps
		sev  Severity
		want string
	}{
		{"in order", &result.Stamps{Checked: 30}, Pass, "30 of 30 records in order"},
		{"out of order", &result.Stamps{Checked: 30, Disordered: 30, Breaks: map[string]int64{"done<last_token": 30}, WorstMs: 781.5, WorstSeq: 7}, Fail,
			"30 of 30 records out of order (done<last_token 30; worst by 781.500 ms, request 7) on client epoll, h2c"},
		{"nothing", &result.Stamps{}, Warn, "no record to check"},
		{"a merged part unchecked", &result.Stamps{Checked: 20}, Warn, "20 of 30 records checked, all in order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := good()
			res.Config.Client, res.Config.Protocol = "epoll", "h2c"
			res.Stamps = tc.s
			f := find(t, Run(res, Options{}), "stamps")
			if f.Severity != tc.sev || !strings.Contains(f.Message, tc.want) {
				t.Errorf("%s: %s, want %s: %s", f.Severity, f.Message, tc.sev, tc.want)
			}
		})
	}
	for _, f := range Run(good(), Options{}) {
		if f.Check == "stamps" {
			t.Errorf("a result without stamps has a finding: %+v", f)
		}
	}
}

// TestRecheck: report's re-check replaces a saved stamps check with
// today's verdict, adds one where none was saved, and leaves a result
// without stamps alone.
func TestRecheck(t *testing.T) {
	res := good()
	res.Stamps = &result.Stamps{Checked: 30, Disordered: 2, Breaks: map[string]int64{"done<last_token": 2}, WorstMs: 5}
	res.Checks = []result.Check{{Name: "accounting", Severity: "pass"}, {Name: "stamps", Severity: "pass", Message: "saved"}}
	Recheck(res)
	if len(res.Checks) != 2 || res.Checks[1].Name != "stamps" || res.Checks[1].Severity != "fail" {
		t.Errorf("replaced: %+v", res.Checks)
	}
	res.Checks = res.Checks[:1]
	Recheck(res)
	if len(res.Checks) != 2 || res.Checks[1].Severity != "fail" {
		t.Errorf("added: %+v", res.Checks)
	}
	old := good()
	old.Checks = []result.Check{{Name: "accounting", Severity: "pass"}}
	Recheck(old)
	if len(old.Checks) != 1 {
		t.Errorf("a result without stamps: %+v", old.Checks)
	}
}
