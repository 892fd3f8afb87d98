package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/result"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrorsGolden(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"-d", "1s", "http://127.0.0.1:1/"},
		{"-rate", "0", "http://127.0.0.1:1/"},
		{"-rate", "-5", "http://127.0.0.1:1/"},
		{"-rate", "NaN", "http://127.0.0.1:1/"},
		{"-rate", "1e12", "http://127.0.0.1:1/"},
		{"-rate", "abc", "http://127.0.0.1:1/"},
		{"-rate", "10", "-d", "40", "http://127.0.0.1:1/"},
		{"-rate", "10", "-d", "-1s", "http://127.0.0.1:1/"},
		{"-rate", "0.5", "-d", "1s", "http://127.0.0.1:1/"},
		{"-rate", "10", "--arrival", "bursty", "http://127.0.0.1:1/"},
		{"-rate", "10", "-c", "0", "http://127.0.0.1:1/"},
		{"-rate", "10", "--timeout", "0s", "http://127.0.0.1:1/"},
		{"-rate", "10", "127.0.0.1:8080/predict"},
		{"-rate", "10", "ftp://127.0.0.1/x"},
		{"-rate", "10", "http:///nohost"},
		{"-rate", "10", "http://127.0.0.1:1/", "http://127.0.0.1:2/"},
		{"-rate", "10", "-H", "NoColon", "http://127.0.0.1:1/"},
		{"-rate", "10", "-H", "Bad Name: v", "http://127.0.0.1:1/"},
		{"-rate", "10", "--body", "x", "--body-file", "y", "http://127.0.0.1:1/"},
		{"-rate", "10", "--body-file", filepath.Join(dir, "missing.json"), "http://127.0.0.1:1/"},
		{"-rate", "10", "-m", "GE T", "http://127.0.0.1:1/"},
		{"-rate", "10", "-o", filepath.Join(dir, "no", "such", "dir.json"), "http://127.0.0.1:1/"},
		{"--no-such-flag"},
		{"-rate", "10", "--slo", "latency.p99<=1ms", "http://127.0.0.1:1/"},
		{"-rate", "10", "--slo", "response.p99<=200", "http://127.0.0.1:1/"},
		{"-rate", "1600000", "http://127.0.0.1:1/"},
		{"stub", "--workers", "0"},
		{"stub", "--policy", "lifo"},
		{"stub", "--batch-slots", "-1"},
		{"stub", "--itl", "-1ms"},
		{"stub", "--output-tokens", "0"},
		{"stub", "--prefix-cache-tokens", "-1"},
		{"stub", "--prefix-cache-block", "0"},
		{"--closed", "--arrival", "poisson", "-rate", "10", "http://127.0.0.1:1/"},
		{"-rate", "10", "--think", "10ms", "http://127.0.0.1:1/"},
		{"--closed", "--think", "-1s", "http://127.0.0.1:1/"},
		{"--closed", "-rate", "0", "http://127.0.0.1:1/"},
		{"diff"},
		{"diff", "a.json", "b.json", "c.json"},
		{"diff", "--metric", "service", "a.json"},
		{"diff", "--metric", "ttfb", "a.json", "b.json"},
		{"report"},
		{"report", "--format", "pdf", "a.json"},
		{"report", "--metric", "service", "a.json"},
		{"report", "--metric", "ttfb", "--format", "hgrm", "a.json"},
		{"report", "--png"},
		{"report", "--nope", "a.json"},
		{"diff", "--nope", "a.json"},
		{"stub", "--nope"},
		{"stub", "extra"},
		{"model", "poisson", "--nope"},
		// A mistyped command or flag is named, and the near one
		// suggested (suggest.go).
		{"frobnicate"},
		{"repport", "run.json"},
		{"sweeep", "--rates", "10,20"},
		{"help", "bogus"},
		{"help", "reprot"},
		{"--rates", "10,20"},
		{"--rat", "10"},
		{"-rate", "10", "--conections", "4", "http://127.0.0.1:1/"},
		{"-rate", "10", "-c", "x", "http://127.0.0.1:1/"},
		{"-rate", "10", "--seed", "-1", "http://127.0.0.1:1/"},
		// Other tools' flags are named as theirs, with openload's
		// (suggest.go), not read as shorthands.
		{"-max-workers=4", "-rate", "160", "http://127.0.0.1:1/"},
		{"-rate", "160", "-redirects=0", "http://127.0.0.1:1/"},
		{"-lazy", "-rate", "160", "http://127.0.0.1:1/"},
		{"--vus", "10", "http://127.0.0.1:1/"},
		{"-rate", "10", "http://127.0.0.1:99999/"},
		{"stub", "--listen", ":99999"},
		{"-rate", "10", "--targets", filepath.Join(dir, "nosuch.http")},
		{"-rate", "10", "--values", filepath.Join(dir, "nosuch.csv"), "http://127.0.0.1:1/{{csv.a}}"},
		{"-rate", "10", "--log", "-", "-o", "-", "http://127.0.0.1:1/"},
		{"merge", "testdata/diff-open.json", "testdata/interval.hlog"},
	}
	cases = append(cases, replayUsageCases(t, dir)...)
	cases = append(cases, retryUsageCases()...)
	cases = append(cases, shardUsageCases()...) // shard_test.go
	cases = append(cases, stagesUsageCases()...)
	cases = append(cases, sweepUsageCases()...)
	var b strings.Builder
	for _, args := range cases {
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d (usage)", args, code, exitUsage)
		}
		if stdout != "" {
			t.Errorf("%q: printed to stdout: %q", args, stdout)
		}
		// The hint points to the help of the subcommand that failed.
		hint := "run 'openload --help' for usage"
		if cmd := subcommand(args); cmd != "" {
			hint = "run 'openload " + cmd + " --help' for usage"
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 2 || lines[1] != hint {
			t.Errorf("%q: want a one-line error and the hint %q, got %q", args, hint, stderr)
		}
		fmt.Fprintf(&b, "$ openload %s\n%s", strings.ReplaceAll(strings.Join(args, " "), dir, "$TMP"), strings.ReplaceAll(stderr, dir, "$TMP"))
	}
	golden.Check(t, "usage-errors.golden", b.String())
}

// subcommand is the subcommand args run ("model poisson"), or "" for a
// load run.
func subcommand(args []string) string {
	switch {
	case len(args) == 0:
		return ""
	case args[0] == "model" && len(args) > 1 && args[1] == "poisson":
		return "model poisson"
	case slices.Contains([]string{"stub", "diff", "report", "model", "merge", "sweep"}, args[0]):
		return args[0]
	}
	return ""
}

func TestLongForm(t *testing.T) {
	var o loadOptions
	fs := loadFlags(&o)
	tests := []struct{ in, want []string }{
		{[]string{"-rate", "160", "-d", "40s", "URL"}, []string{"--rate", "160", "-d", "40s", "URL"}},
		{[]string{"-rate=160", "-duration=2s"}, []string{"--rate=160", "--duration=2s"}},
		{[]string{"--rate", "160", "--duration", "40s"}, []string{"--rate", "160", "--duration", "40s"}},
		{[]string{"-r160", "-c1"}, []string{"-r160", "-c1"}},
		{[]string{"-H", "-rate", "-q"}, []string{"-H", "-rate", "-q"}},
		{[]string{"-quiet", "-connections", "4"}, []string{"--quiet", "--connections", "4"}},
		{[]string{"--", "-rate"}, []string{"--", "-rate"}},
		{[]string{"-nosuch", "1"}, []string{"-nosuch", "1"}},
		{[]string{"-method", "POST", "-output=r.json"}, []string{"--method", "POST", "--output=r.json"}},
		// A shorthand cluster: the value-taking letter ends it and
		// takes the next argument, unless the value is attached.
		{[]string{"-qH", "-rate", "-rate", "1"}, []string{"-qH", "-rate", "--rate", "1"}},
		{[]string{"-qc4", "-rate", "1"}, []string{"-qc4", "--rate", "1"}},
		{[]string{"-c=4", "-rate", "1"}, []string{"-c=4", "--rate", "1"}},
		{[]string{"--header", "-quiet", "-quiet"}, []string{"--header", "-quiet", "--quiet"}},
		{[]string{"--header=x", "-quiet"}, []string{"--header=x", "--quiet"}},
		{[]string{"-H"}, []string{"-H"}},
		{[]string{"URL", "-", "-rate", "1"}, []string{"URL", "-", "--rate", "1"}},
	}
	for _, tc := range tests {
		if got := longForm(fs, tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("longForm(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPflagSingleDash is why longForm exists: pflag alone reads "-method
// POST" as the shorthand -m with the value "ethod", and POST as an
// argument. Should pflag ever read it as a long flag, this fails, and
// longForm can go.
func TestPflagSingleDash(t *testing.T) {
	var o loadOptions
	fs := loadFlags(&o)
	if err := fs.Parse([]string{"-method", "POST", "-output", "r.json"}); err != nil {
		t.Fatal(err)
	}
	if o.method != "ethod" || o.output != "utput" || !reflect.DeepEqual(fs.Args(), []string{"POST", "r.json"}) {
		t.Errorf("pflag read -method POST -output r.json as method %q, output %q, arguments %q", o.method, o.output, fs.Args())
	}
}

// TestSingleDashParsing parses the documented command line exactly as
// written and the double-dash form, and checks both set the same values.
func TestSingleDashParsing(t *testing.T) {
	parse := func(args ...string) loadOptions {
		var o loadOptions
		fs := loadFlags(&o)
		if err := fs.Parse(longForm(fs, args)); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if fs.Arg(0) != "http://127.0.0.1:8080/predict" {
			t.Fatalf("%q: URL %q", args, fs.Arg(0))
		}
		return o
	}
	a := parse("-rate", "160", "-d", "40s", "http://127.0.0.1:8080/predict")
	b := parse("--rate", "160", "--duration", "40s", "http://127.0.0.1:8080/predict")
	c := parse("-r", "160", "-duration=40s", "http://127.0.0.1:8080/predict")
	if a.run.Schedule.Rate != 160 || a.run.Schedule.Duration.String() != "40s" {
		t.Errorf("-rate 160 -d 40s parsed as rate %v duration %v", a.run.Schedule.Rate, a.run.Schedule.Duration)
	}
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
		t.Errorf("forms differ:\n%+v\n%+v\n%+v", a, b, c)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCLI("--help")
	if code != exitOK || !strings.Contains(stdout, "--rate") || !strings.Contains(stdout, "Exit codes") {
		t.Errorf("help: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI("stub", "-help")
	if code != exitOK || !strings.Contains(stdout, "--workers") {
		t.Errorf("stub help: exit %d\n%s", code, stdout)
	}
	var o loadOptions
	fs := loadFlags(&o)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Usage == "" && f.Deprecated == "" {
			t.Errorf("flag --%s has no help text", f.Name)
		}
	})
}

// TestRunWritesResultAndLog runs a short load against a loopback server and
// checks the JSON result and the CSV log agree with the schedule.
func TestRunWritesResultAndLog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	stdout, _ := runOK(t, "-rate", "100", "-d", "500ms", "-H", "Authorization: Bearer s3cret",
		"-o", out, "--log", logf, "--send-delay-budget", "1s", srv.URL+"/predict")
	wantLines(t, stdout, "response time", "service time", "send delay",
		"counts   expected 50 · scheduled 50 · sent 50 · completed 50 · errors 0 · timeouts 0 · unfinished 0   ✓",
		"status   200 ×50", "result: valid")
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "s3cret") {
		t.Error("the result file holds the Authorization value")
	}
	res := readResult(t, out)
	if res.Version != result.Version || res.Counts.Scheduled != 50 || res.Counts.Completed != 50 || res.Counts.Expected != 50 {
		t.Errorf("result version %d counts %+v", res.Version, res.Counts)
	}
	if res.Config.Headers["Authorization"][0] != result.Redacted {
		t.Errorf("headers in result: %v", res.Config.Headers)
	}
	es, err := readLog(t, logf)
	for _, e := range es {
		if e.Status != 200 || !e.WasSent || e.Done < e.Sent || e.Sent < e.Scheduled {
			t.Errorf("log entry %+v", e)
		}
	}
	if err != nil || len(es) != 50 {
		t.Errorf("log: %d entries, err %v", len(es), err)
	}
}

// TestRunRefusedTargetCompletes: a target that refuses every connection
// still yields a complete, balanced run; errors are classified, and the
// run exits 5: the target failed (target_test.go has the report's words).
func TestRunRefusedTargetCompletes(t *testing.T) {
	addr, release, err := rawtcp.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	url := "http://" + addr
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI("-rate", "50", "-d", "400ms", "-q", "-o", out, url)
	if code != exitTargetFailed || stderr != "openload: target failed: 20 of 20 refused (exit 5)\n" {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	res := readResult(t, out)
	c := res.Counts
	if c.Scheduled != 20 || c.Errors != 20 || !c.Balanced() || res.ErrorKinds["refused"] != 20 {
		t.Errorf("counts %+v kinds %v", c, res.ErrorKinds)
	}
}

// TestObjectivesExitCodes: a met objective exits 0, a breached one 4, and
// both are stored in the result, with the default objective on errors when
// the user set none.
//
// Which way each objective goes is known, on any machine: no response
// time of a run can exceed an hour, longer than go test lets a test
// binary live (-timeout, 10 minutes unless set), and none is under a
// microsecond, less than a loopback round trip. (The met one was 10 s,
// a bound on the machine's speed, however loose.)
func TestObjectivesExitCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI("-rate", "50", "-d", "200ms", "--send-delay-budget", "1s", "-o", out,
		"--slo", "response.p99<=1h", "--slo", "errors<=0%", srv.URL)
	if code != exitOK || !strings.Contains(stdout, "PASS  response.p99 <= 3600000.000 ms") {
		t.Fatalf("met objectives: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("-rate", "50", "-d", "200ms", "--send-delay-budget", "1s", "-o", out,
		"--slo", "response.p99<=1h", "--slo", "response.max<1us", srv.URL)
	if code != exitSLOBreached || !strings.Contains(stdout, "FAIL  response.max < 0.001 ms") || !strings.Contains(stdout, "objectives: BREACHED") {
		t.Fatalf("breached objective: exit %d\n%s", code, stdout)
	}
	res := readResult(t, out)
	if len(res.SLOs) != 4 || res.SLOs[3].Expr != "client_errors<=1%" || !res.SLOs[3].Default || !res.SLOs[0].Pass || res.SLOs[1].Pass || res.SLOs[1].Expr != "response.max<1us" ||
		res.SLOs[0].Default || res.SLOs[1].Default || !res.SLOs[2].Default || !res.SLOs[2].Pass || res.SLOs[2].Expr != "errors<=1%" {
		t.Errorf("slos in the result: %+v", res.SLOs)
	}
}

// TestDialTimeoutFlag: --dial-timeout is recorded in the result, which
// leaves it out when unset, and refused when negative or longer than
// --timeout, which bounds a dial already.
func TestDialTimeoutFlag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	for _, want := range []string{"250ms", ""} {
		args := []string{"-q", "-rate", "50", "-d", "100ms", "-o", out, srv.URL}
		if want != "" {
			args = append([]string{"--dial-timeout", want}, args...)
		}
		runOK(t, args...)
		if got := readResult(t, out).Config.DialTimeout; got != want {
			t.Errorf("%q: dial_timeout %q, want %q", args, got, want)
		}
	}
	for flags, want := range map[string]string{
		"--dial-timeout -1s":             "--dial-timeout must be ≥ 0 (0: --timeout), got -1s",
		"--dial-timeout 2s --timeout 1s": "--dial-timeout 2s is longer than --timeout 1s, which bounds a request's dial already",
	} {
		code, _, stderr := runCLI(append(strings.Fields(flags), "-rate", "1", srv.URL)...)
		if code != exitUsage || !strings.Contains(stderr, "openload: "+want+"\n") {
			t.Errorf("%s: exit %d, want %d and %q: %q", flags, code, exitUsage, want, stderr)
		}
	}
}

// TestClientFlags: the lean client is the default for http URLs, on the
// event loop on Linux; --no-epoll runs it with a goroutine per connection,
// --net-http selects net/http's transport, the old --fast-http1 still runs
// (with a one-line deprecation notice) and cannot be mixed with --net-http.
func TestClientFlags(t *testing.T) {
	def := "lean"
	if runtime.GOOS == "linux" {
		def = "epoll"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		flags      []string
		client     string
		deprecated bool
	}{
		{nil, def, false},
		{[]string{"--no-epoll"}, "lean", false},
		{[]string{"--net-http"}, "net/http", false},
		{[]string{"--fast-http1"}, def, true},
	} {
		out := filepath.Join(dir, "r.json")
		args := append(append([]string{"-q", "-rate", "50", "-d", "200ms", "-o", out}, c.flags...), srv.URL)
		_, stderr := runOK(t, args...)
		if got := strings.Contains(stderr, "--fast-http1 is deprecated"); got != c.deprecated {
			t.Errorf("%v: deprecation notice %v, want %v: %q", c.flags, got, c.deprecated, stderr)
		}
		if res := readResult(t, out); res.Config.Client != c.client {
			t.Errorf("%v: client %q, want %q", c.flags, res.Config.Client, c.client)
		}
	}
	for _, bad := range [][]string{{"--net-http", "--fast-http1"}, {"--net-http", "--no-epoll"}, {"--h2c", "--no-epoll"}} {
		if code, _, stderr := runCLI(append(bad, "-rate", "1", srv.URL)...); code != exitUsage || !strings.Contains(stderr, bad[1]+" ") {
			t.Errorf("%v: exit %d, want %d, with an error naming %s: %q", bad, code, exitUsage, bad[1], stderr)
		}
	}
}

// TestVersionAndBare: --version says the module's version and commit (as
// go build stamps them), and openload with no arguments prints its help,
// not the first missing flag.
func TestVersionAndBare(t *testing.T) {
	code, stdout, stderr := runCLI()
	if code != exitOK || stdout != usageText() || stderr != "" {
		t.Errorf("bare openload: exit %d, stdout %.60q…, stderr %q; want the help, exit 0", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("--version")
	if code != exitOK || !strings.HasPrefix(stdout, "openload ") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "bb485f6abc"}, {Key: "vcs.time", Value: "2026-12-06T03:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionText(bi), "openload v1.2.0, commit bb485f6abc (2026-12-06T03:00:00Z), modified, go1.26.8"; got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	bi.Settings = nil
	if got := versionText(bi); !strings.Contains(got, "commit unknown") {
		t.Errorf("versionText without vcs = %q", got)
	}
}
