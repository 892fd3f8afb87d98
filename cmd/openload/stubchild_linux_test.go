package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openload/openload/servers/stub"
)

// childrenOf returns the pids of pid's child processes (Linux: /proc).
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(n); ok && ppid == pid {
			kids = append(kids, n)
		}
	}
	return kids
}

// procStat returns a process's parent and state from /proc/pid/stat.
func procStat(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], err == nil
}

// TestBuiltinStubInAChildProcess: with no URL the stub runs as a child
// process of openload's binary (here the test binary, see TestMain), the
// report and the result say that the generator's figures are openload's
// own and how much CPU the child used, and no child is left once the run
// returns.
func TestBuiltinStubInAChildProcess(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr := runOK(t, "-rate", "100", "-d", "500ms", "--send-delay-budget", "1s", "-o", out)
	wantLines(t, stdout,
		"target: built-in stub model server in a child process (4 workers × 50ms, policy admission; it used ",
		"openload's own: the built-in stub ran in a child process",
		"by X-Stub-Source",
		"completed 50 ·")
	if strings.Contains(stderr, "not in a child process") {
		t.Errorf("fell back to the in-process stub: %s", stderr)
	}
	res := readResult(t, out)
	if !res.Config.StubChild || res.Config.StubCPUSeconds <= 0 || res.Config.BuiltinStub == "" {
		t.Errorf("result config %+v: want a child stub with its CPU time", res.Config)
	}
	if kids := childrenOf(t, os.Getpid()); len(kids) != 0 {
		t.Errorf("child processes left after the run: %v", kids)
	}
}

// waitGone polls until pid has exited (gone, or a zombie waiting for its
// new parent to reap it), for up to 10 s.
func waitGone(pid int) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, state, ok := procStat(pid); !ok || state == "Z" {
			return true
		}
	}
	return false
}

// stubChildOf returns the built-in stub's process of a running openload.
func stubChildOf(t *testing.T, pid int) int {
	t.Helper()
	kids := childrenOf(t, pid)
	if len(kids) != 1 {
		t.Fatalf("openload %d has children %v, want its stub alone", pid, kids)
	}
	return kids[0]
}

// TestStubChildOutlivesNoSignal: SIGINT to openload's whole process group,
// as Ctrl-C at a terminal sends it, reaches openload alone (the stub runs
// in a group of its own): the stub keeps serving while openload drains
// (every request completes), and is gone when openload exits 130. After a SIGKILL of openload, which stops
// nothing itself, the stub sees its standard input close and exits.
func TestStubChildOutlivesNoSignal(t *testing.T) {
	t.Run("ctrl-c", func(t *testing.T) {
		res := filepath.Join(t.TempDir(), "r.json")
		// In a group of its own, as a shell's job.
		cmd := exec.Command(os.Args[0], "-rate", "100", "-d", "60s", "-o", res)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd, out := startOpenloadCmd(t, cmd)
		time.Sleep(700 * time.Millisecond)
		child := stubChildOf(t, cmd.Process.Pid)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := exitCode(t, cmd); code != exitInterrupted {
			t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, out)
		}
		if !waitGone(child) {
			t.Errorf("stub %d still running after openload exited", child)
		}
		// Only openload saw the signal: the stub, another openload
		// process, would have said so on the same stderr.
		if n := strings.Count(out.String(), "interrupt: stopping"); n != 1 {
			t.Errorf("%d processes said they were interrupted, want openload alone:\n%s", n, out)
		}
		if _, err := os.Stat(res); err != nil {
			t.Fatalf("no result: %v\n%s", err, out)
		}
		r := readResult(t, res)
		if c := r.Counts; c.Scheduled == 0 || c.Completed != c.Scheduled {
			t.Errorf("counts %+v: the stub stopped before openload's drain", c)
		}
	})
	t.Run("kill", func(t *testing.T) {
		cmd, _ := startOpenload(t, "-rate", "100", "-d", "60s")
		time.Sleep(700 * time.Millisecond)
		child := stubChildOf(t, cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		if !waitGone(child) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Errorf("stub %d outlived its killed parent", child)
		}
	})
}

// TestStubChildWithoutAddress: a child that exits without telling its
// address (here true(1) in the place of openload's binary) leaves the
// stub in openload's process, and stderr says why.
func TestStubChildWithoutAddress(t *testing.T) {
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	saved := stubExecutable
	stubExecutable = func() (string, error) { return bin, nil }
	defer func() { stubExecutable = saved }()
	stdout, stderr := runOK(t, "-rate", "100", "-d", "200ms", "--send-delay-budget", "1s")
	if !strings.Contains(stderr, "not in a child process (the child process ended without an address (exit status 0") ||
		!strings.Contains(stdout, "target: built-in stub model server in openload's process") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", stderr, stdout)
	}
	if kids := childrenOf(t, os.Getpid()); len(kids) != 0 {
		t.Errorf("child processes left: %v", kids)
	}
}

// TestStubChildKilledWhenDeaf: a child that tells its address but does not
// exit when its standard input closes (here a script that sleeps) is
// killed stubChildWait after it was asked to stop, and stop returns.
func TestStubChildKilledWhenDeaf(t *testing.T) {
	script := filepath.Join(t.TempDir(), "deaf")
	body := "#!/bin/sh\necho '" + listeningPrefix + "http://127.0.0.1:9 (deaf)'\nexec sleep 60\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	savedExe, savedWait := stubExecutable, stubChildWait
	stubExecutable = func() (string, error) { return script, nil }
	stubChildWait = 200 * time.Millisecond
	defer func() { stubExecutable, stubChildWait = savedExe, savedWait }()
	c, u, err := startStubChild(stub.DefaultConfig())
	if err != nil || u != "http://127.0.0.1:9" {
		t.Fatalf("start: %q, %v", u, err)
	}
	pid := c.cmd.Process.Pid
	c.stop(false)
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("child %d ended %v, want killed", pid, c.cmd.ProcessState)
	}
	if kids := childrenOf(t, os.Getpid()); len(kids) != 0 {
		t.Errorf("child processes left: %v", kids)
	}
}
