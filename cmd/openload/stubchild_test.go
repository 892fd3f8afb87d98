package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltinStubFallsBackInProcess: when no child can be started, the
// stub runs in openload's process, stderr says why, and the report says
// that its work is in the generator's figures.
func TestBuiltinStubFallsBackInProcess(t *testing.T) {
	saved := stubExecutable
	stubExecutable = func() (string, error) { return "", errors.New("no executable here") }
	defer func() { stubExecutable = saved }()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr := runOK(t, "-rate", "100", "-d", "300ms", "--send-delay-budget", "1s", "-o", out)
	if !strings.Contains(stderr, "built-in stub: not in a child process (no executable here)") {
		t.Errorf("stderr does not say why: %s", stderr)
	}
	wantLines(t, stdout,
		"target: built-in stub model server in openload's process (4 workers × 50ms, policy admission): its work is in the generator's figures",
		"includes the built-in stub, which ran in openload's process")
	res := readResult(t, out)
	if res.Config.StubChild || res.Config.StubCPUSeconds != 0 {
		t.Errorf("in-process stub recorded as a child: %+v", res.Config)
	}
}

func TestStubListening(t *testing.T) {
	for line, want := range map[string]string{
		listeningPrefix + "http://127.0.0.1:4242 (4 workers × 50ms, policy admission); stats at …": "http://127.0.0.1:4242",
		listeningPrefix + "127.0.0.1:4242 (no scheme)":                                             "",
		"openload stub: stopped": "",
		"":                       "",
	} {
		got, ok := stubListening(line)
		if got != want || ok != (want != "") {
			t.Errorf("stubListening(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}
