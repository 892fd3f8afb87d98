package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/servers/stub"
)

// The built-in stub runs as a child process of openload's own binary
// (`openload stub` on 127.0.0.1:0), so that the generator's CPU and GC
// figures, which are its process's, are openload's alone. In the same
// process the stub's model workers, gate and HTTP server would be counted
// as the generator's work (docs/first-run.md has the two side by side).
//
// The child tells its address on its first line of output; it stops when
// its standard input closes, which happens when openload stops it at the
// end of the run and also when openload dies in any way, so no child
// outlives it. It runs in a process group of its own, so that a Ctrl-C at
// the terminal reaches openload alone: openload then drains its requests
// in flight against the still-running stub, as with any target, and stops
// the child afterwards. Where a child cannot be started (no process
// groups, no executable), the stub runs in openload's process and the
// report says its work is in the generator's figures.

// stubChildWait bounds the wait for the child's address, and then for its
// exit once asked to stop; past it the child is killed (a test shortens
// it).
var stubChildWait = 10 * time.Second

// stubExecutable is the binary the child runs: openload's own (a test
// replaces it).
var stubExecutable = os.Executable

// listeningPrefix starts the line on which `openload stub` tells its
// address (runStub).
const listeningPrefix = "openload stub: listening on "

// stubChild is the built-in stub running as a child process.
type stubChild struct {
	cmd     *exec.Cmd
	cancel  context.CancelFunc // asks the child to stop (cmd.Cancel)
	drained chan struct{}      // closed when the child's stdout reached its end
	errs    tailBuffer         // the child's stderr
	once    sync.Once
	cpu     time.Duration
}

// tailBuffer keeps the last tailMax bytes written to it. The child's
// stderr goes there rather than to openload's, which openload writes to
// at the same time; stop passes it on.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

const tailMax = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = t.b[len(t.b)-tailMax:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// startStubChild starts `openload stub` with cfg's flags in a child
// process and returns it with the stub's URL.
func startStubChild(cfg stub.Config) (*stubChild, string, error) {
	attr, err := childProcAttr() // stubchild_unix.go
	if err != nil {
		return nil, "", err
	}
	exe, err := stubExecutable()
	if err != nil {
		return nil, "", err
	}
	args := []string{"stub", "--listen", "127.0.0.1:0", "--until-stdin-closes"}
	if cfg.H2C {
		args = append(args, "--h2c")
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &stubChild{cancel: cancel, drained: make(chan struct{})}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.SysProcAttr = attr
	cmd.Stderr = &c.errs
	for _, kv := range os.Environ() {
		// A profile of openload is openload's alone (profile.go).
		if !strings.HasPrefix(kv, "OPENLOAD_CPUPROFILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, "", err
	}
	// Stopping (cancel) closes the child's standard input, which tells it
	// to exit; os/exec kills it if it has not exited stubChildWait later.
	cmd.Cancel, cmd.WaitDelay = stdin.Close, stubChildWait
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, "", err
	}
	c.cmd = cmd
	addr := make(chan string, 1)
	go func() {
		defer close(c.drained)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := stubListening(sc.Text()); ok {
				addr <- u
				break
			}
		}
		close(addr)
		io.Copy(io.Discard, stdout) // until the child exits
	}()
	t := time.NewTimer(stubChildWait)
	defer t.Stop()
	select {
	case u, ok := <-addr:
		if ok {
			return c, u, nil
		}
		c.stop(true)
		return nil, "", fmt.Errorf("the child process ended without an address (%v: %s)", c.cmd.ProcessState, c.errs.String())
	case <-t.C:
		c.stop(true)
		return nil, "", fmt.Errorf("the child process told no address in %v", stubChildWait)
	}
}

// stubListening returns the URL of runStub's "listening on" line.
func stubListening(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, listeningPrefix)
	if !ok {
		return "", false
	}
	raw, _, _ := strings.Cut(rest, " ")
	if u, err := url.Parse(raw); err != nil || u.Scheme != "http" || u.Host == "" {
		return "", false
	}
	return raw, true
}

// stop ends the child: its standard input closes, and a child that has
// not exited after stubChildWait, or at once with kill, is killed. It
// waits for the child and returns the CPU time (user + system) the child
// used in its life. Calling it again returns the same.
func (c *stubChild) stop(kill bool) time.Duration {
	c.once.Do(func() {
		if kill {
			c.cmd.Process.Kill()
		}
		c.cancel()
		<-c.drained // Wait closes stdout: read it to the end first
		c.cmd.Wait()
		if ps := c.cmd.ProcessState; ps != nil {
			c.cpu = ps.UserTime() + ps.SystemTime()
		}
	})
	return c.cpu
}

// errNoChild says why a platform runs the built-in stub in openload's
// process.
var errNoChild = errors.New("no process groups on this platform")

// builtinStub starts the built-in stub with cfg: in a child process
// where it can, in openload's process otherwise, saying why on stderr
// unless the platform has no process groups.
func builtinStub(cfg stub.Config, stderr io.Writer) (loadtest.Stub, error) {
	c, raw, err := startStubChild(cfg)
	if err == nil {
		u, err := url.Parse(raw + "/predict")
		if err != nil {
			c.stop(true)
			return loadtest.Stub{}, err
		}
		stop := func() time.Duration {
			cpu := c.stop(false)
			if msg := c.errs.String(); msg != "" {
				fmt.Fprintf(stderr, "openload: built-in stub said: %s\n", msg)
			}
			return cpu
		}
		return loadtest.Stub{URL: u, Description: describeStub(cfg), Child: true, Stop: sync.OnceValue(stop)}, nil
	}
	if !errors.Is(err, errNoChild) {
		fmt.Fprintf(stderr, "openload: built-in stub: not in a child process (%v): it runs in openload's, and its work counts in the generator's figures\n", err)
	}
	s, err := stub.NewServer(cfg)
	if err != nil {
		return loadtest.Stub{}, err
	}
	u, _ := url.Parse(s.URL + "/predict")
	stop := func() time.Duration { s.Close(); return 0 }
	return loadtest.Stub{URL: u, Description: describeStub(s.Config), Stop: sync.OnceValue(stop)}, nil
}

// startStub is a run's loadtest.Setup.StartStub: the built-in stub, for
// a run without a URL. The stub says what its gate decided, so its class
// header and Server-Timing are shown unless the user chose otherwise.
func startStub(fs *pflag.FlagSet, stderr io.Writer) func(*loadtest.Options) (loadtest.Stub, error) {
	return func(r *loadtest.Options) (loadtest.Stub, error) {
		cfg := stub.DefaultConfig()
		cfg.H2C = r.Protocol == engine.H2C
		st, err := builtinStub(cfg, stderr)
		if err != nil {
			return st, err
		}
		if !fs.Changed("class-header") {
			r.ClassHeaders = []string{"X-Stub-Source"}
		}
		if !fs.Changed("server-timing") {
			r.ServerTiming = true
		}
		return st, nil
	}
}
