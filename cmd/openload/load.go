package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/targets/stub"
	"github.com/openload/openload/verify"
)

// maxRate is the largest rate openload accepts: far above what one machine
// can send, low enough to catch a slipped finger.
const maxRate = 10_000_000

// maxRequests bounds rate × duration without --yes, so that a typo such as
// -rate 1600000 does not become an accidental flood.
const maxRequests = 5_000_000

// loadOptions are the flags of a load run.
type loadOptions struct {
	rate         float64
	duration     time.Duration
	arrival      string
	seed         uint64
	connections  int
	method       string
	headers      []string
	body         string
	bodyFile     string
	timeout      time.Duration
	drain        time.Duration
	output       string
	logFile      string
	quiet        bool
	sendDelay    time.Duration
	help         bool
	classHeaders []string
	slos         []string
	yes          bool
	redact       []string
	hlog         string
	objectives   []verify.Objective
	serverTiming bool
	closed       bool
	think        time.Duration
	replay       replayOptions // replay.go
	proto        protoOptions  // proto.go
	retry        retryOptions  // retryflags.go
	faults       faultOptions  // safety.go
	auto         autoOptions   // autoheaders.go
}

// loadFlags registers the flags of a load run, group by group as the help
// shows them (help.go); sub-options register theirs in their own files.
func loadFlags(o *loadOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("openload", pflag.ContinueOnError)
	fs.SortFlags = false
	inGroup(fs, groupLoad, func() {
		fs.Float64VarP(&o.rate, "rate", "r", 0, "requests per second for the whole run (required, > 0, unless --arrivals; optional with --closed)")
		fs.DurationVarP(&o.duration, "duration", "d", 10*time.Second, "length of the schedule (with --arrivals: the file's span)")
		fs.StringVar(&o.arrival, "arrival", schedule.Constant, "arrival process: constant or poisson")
		fs.Uint64Var(&o.seed, "seed", 1, "seed of the poisson arrival process")
		o.replay.scheduleFlags(fs)
		fs.IntVarP(&o.connections, "connections", "c", 64, "upper bound on connections and requests in flight; waiting for one is send delay (with --closed: the number of users)")
		fs.BoolVar(&o.closed, "closed", false, "closed loop, to see what closed-loop tools report: -c users each send, wait for the response, send again; with --rate, paced to it, skipping the slots missed while waiting")
		fs.DurationVar(&o.think, "think", 0, "with --closed: pause after each response before the user sends again")
		fs.DurationVar(&o.drain, "drain", 10*time.Second, "how long to wait for in-flight requests after the last scheduled send")
		fs.BoolVar(&o.yes, "yes", false, "allow a run of more than 5,000,000 requests (rate × duration)")
	})
	inGroup(fs, groupRequest, func() {
		fs.StringVarP(&o.method, "method", "m", "", "HTTP method (default GET, or POST with a body)")
		fs.StringArrayVarP(&o.headers, "header", "H", nil, "request `header` 'Name: value' (repeatable)")
		fs.StringVar(&o.body, "body", "", "request body")
		fs.StringVar(&o.bodyFile, "body-file", "", "read the request body from this `file`")
		fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "per-request timeout, from the moment it is sent")
	})
	o.replay.checkFlags(fs) // --stamp-header (request), --dwell-bound (checks)
	inGroup(fs, groupOutput, func() {
		fs.StringVarP(&o.output, "output", "o", "", "write the JSON result to this `file` ('-' for stdout; the report then goes to stderr)")
		fs.StringVar(&o.logFile, "log", "", "stream one CSV line per request to this `file`")
		fs.StringVar(&o.hlog, "hlog", "", "write HdrHistogram's interval log (one interval per second; tags response, service, send_delay) to this `file`")
		fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing but errors and failed checks")
		fs.StringArrayVar(&o.classHeaders, "class-header", nil, "group responses by this response `header`'s value (repeatable, up to 4); "+autoClassHeaders()+" needs no flag: its table appears when responses carry it")
		fs.BoolVar(&o.serverTiming, "server-timing", false, "report each Server-Timing metric next to service time; needs no flag when responses carry it; =false: never read it")
		o.auto.flags(fs)
		fs.StringArrayVar(&o.redact, "redact", nil, "also redact this request `header`'s value in the result (Authorization, Cookie and Proxy-Authorization always are)")
	})
	inGroup(fs, groupChecks, func() {
		fs.StringArrayVar(&o.slos, "slo", nil, "`objective` checked at the end, e.g. 'response.p99<=200ms' (repeatable); a breach exits 4; without one on errors, errors<=1% is checked and its breach exits 5")
		fs.DurationVar(&o.sendDelay, "send-delay-budget", verify.DefaultSendDelayP99, "warn when send delay p99 exceeds this")
	})
	inGroup(fs, groupClient, func() {
		o.proto.flags(fs)
		o.faults.flags(fs)
	})
	o.retry.flags(fs) // retries, model expectations
	inGroup(fs, groupEnd, func() {
		fs.BoolVarP(&o.help, "help", "h", false, "show this help")
	})
	return fs
}

// target is where requests go, and what to say about it.
type target struct {
	url     *url.URL
	builtin string     // description of the built-in stub, if used
	child   *stubChild // the built-in stub's process, when it runs in one (stubchild.go)
	close   func()
}

// request is the validated request to send.
type request struct {
	method string
	header http.Header
	body   []byte
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("URL %q has no scheme: write it as http://%s", raw, strings.TrimPrefix(raw, "//"))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q: unsupported scheme %q (use http or https)", raw, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	return u, nil
}

func parseHeader(h http.Header, s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("-H %q: want 'Name: value'", s)
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("-H %q: %q is not a valid header name", s, name)
	}
	value = strings.TrimSpace(value)
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Errorf("-H %q: the value holds characters a header cannot carry", s)
	}
	h.Add(name, value)
	return nil
}

// validate checks every flag; the error names the flag and the value.
func (o *loadOptions) validate(fs *pflag.FlagSet) (request, error) {
	var req request
	if err := o.replay.validate(fs, o); err != nil {
		return req, err
	}
	rated := fs.Changed("rate")
	switch {
	case !rated && !o.closed && o.replay.arrivals == "":
		return req, errors.New("--rate is required (requests per second for the whole run), e.g. -rate 160")
	case rated && (math.IsNaN(o.rate) || math.IsInf(o.rate, 0)):
		return req, fmt.Errorf("--rate must be a finite number, got %v", o.rate)
	case rated && o.rate <= 0:
		return req, fmt.Errorf("--rate must be > 0, got %v", o.rate)
	case rated && o.rate > maxRate:
		return req, fmt.Errorf("--rate %v is absurd: at most %d per second", o.rate, maxRate)
	case o.duration <= 0:
		return req, fmt.Errorf("--duration must be > 0, got %v", o.duration)
	case o.arrival != schedule.Constant && o.arrival != schedule.Poisson:
		return req, fmt.Errorf("--arrival %q: unknown arrival process (known: %s)", o.arrival, strings.Join(schedule.Kinds, ", "))
	case o.connections <= 0 || o.connections > 100_000:
		return req, fmt.Errorf("--connections must be between 1 and 100000, got %d", o.connections)
	case o.timeout <= 0:
		return req, fmt.Errorf("--timeout must be > 0, got %v", o.timeout)
	case o.drain < 0:
		return req, fmt.Errorf("--drain must be ≥ 0, got %v", o.drain)
	case o.sendDelay <= 0:
		return req, fmt.Errorf("--send-delay-budget must be > 0, got %v", o.sendDelay)
	case len(o.classHeaders) > recorder.MaxClassHeaders:
		return req, fmt.Errorf("--class-header given %d times, at most %d", len(o.classHeaders), recorder.MaxClassHeaders)
	case o.body != "" && o.bodyFile != "":
		return req, errors.New("--body and --body-file are exclusive: give one")
	case o.think < 0:
		return req, fmt.Errorf("--think must be ≥ 0, got %v", o.think)
	case fs.Changed("think") && !o.closed:
		return req, errors.New("--think applies to --closed runs only: an open schedule does not wait for responses")
	case o.closed && o.arrival != schedule.Constant:
		return req, fmt.Errorf("--closed paces its users evenly: --arrival %q is not supported with it", o.arrival)
	}
	if rated && o.arrival == schedule.Constant {
		if n := schedule.ConstantCount(o.rate, o.duration); n < 1 {
			return req, fmt.Errorf("--rate %v × --duration %v = %.3g: the schedule holds no request", o.rate, o.duration, o.rate*o.duration.Seconds())
		}
	}
	if n := o.rate * o.duration.Seconds(); rated && n > maxRequests && !o.yes {
		return req, fmt.Errorf("--rate %v × --duration %v = %.0f requests is more than %d: add --yes if you mean it", o.rate, o.duration, n, maxRequests)
	}
	if rated {
		if _, err := schedule.New(schedule.Spec{Kind: o.arrival, Rate: o.rate, Duration: o.duration, Seed: o.seed}); err != nil {
			return req, fmt.Errorf("--rate %v / --duration %v: %v", o.rate, o.duration, err)
		}
	}
	for _, h := range o.classHeaders {
		if !httpguts.ValidHeaderFieldName(h) {
			return req, fmt.Errorf("--class-header %q is not a valid header name", h)
		}
	}
	objs, err := parseObjectives(o.slos)
	if err != nil {
		return req, err
	}
	o.objectives = objs
	if err := o.retry.validate(fs, o); err != nil {
		return req, err
	}
	if err := o.faults.validate(fs); err != nil {
		return req, err
	}
	req.header = http.Header{}
	for _, h := range o.headers {
		if err := parseHeader(req.header, h); err != nil {
			return req, err
		}
	}
	req.body = []byte(o.body)
	if o.bodyFile != "" {
		b, err := os.ReadFile(o.bodyFile)
		if err != nil {
			return req, fmt.Errorf("--body-file %q: %v", o.bodyFile, unwrapPath(err))
		}
		req.body = b
	}
	req.method = strings.ToUpper(o.method)
	if req.method == "" {
		req.method = http.MethodGet
		if len(req.body) > 0 {
			req.method = http.MethodPost
		}
	}
	if !httpguts.ValidHeaderFieldName(req.method) { // a method is a token
		return req, fmt.Errorf("--method %q is not a valid HTTP method", o.method)
	}
	return req, nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o loadOptions
	fs := loadFlags(&o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(longForm(fs, args)); err != nil {
		return usageError(stderr, "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, usageText())
		return exitOK
	}
	if fs.NArg() > 1 {
		return usageError(stderr, "one URL at most, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	req, err := o.validate(fs)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	var u *url.URL
	if fs.NArg() == 1 {
		if u, err = parseURL(fs.Arg(0)); err != nil {
			return usageError(stderr, "%v", err)
		}
	}
	protocol, err := o.proto.protocol(fs, u)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	if fs.Changed("fast-http1") {
		fmt.Fprintln(stderr, "openload: --fast-http1 is deprecated: the lean HTTP/1.1 client is the default now (--net-http turns it off)")
	}

	// Open the output files before anything starts, so a bad path costs
	// nothing.
	var outFile, logFile *os.File
	if o.output != "" && o.output != "-" {
		// The result goes to a temporary file beside the target, renamed
		// into place once complete: an interrupted openload never leaves a
		// half-written result behind.
		if outFile, err = os.CreateTemp(filepath.Dir(o.output), "."+filepath.Base(o.output)+".tmp-*"); err != nil {
			return usageError(stderr, "--output %q: %v", o.output, unwrapPath(err))
		}
		defer os.Remove(outFile.Name()) // a no-op once renamed
		defer outFile.Close()
	}
	var logw *recorder.LogWriter
	if o.logFile != "" {
		if logFile, err = os.Create(o.logFile); err != nil {
			return usageError(stderr, "--log %q: %v", o.logFile, unwrapPath(err))
		}
		defer logFile.Close()
		logw = recorder.NewLogWriter(logFile)
	}
	var hlogw *bufio.Writer
	if o.hlog != "" {
		f, err := os.Create(o.hlog)
		if err != nil {
			return usageError(stderr, "--hlog %q: %v", o.hlog, unwrapPath(err))
		}
		defer f.Close()
		hlogw = bufio.NewWriter(f)
	}
	out := stdout // where the report goes
	if o.output == "-" {
		out = stderr
	}
	var progress func(engine.Progress)
	clearProgress := func() {}
	if !o.quiet && !o.closed && isTerminal(out) {
		progress, clearProgress = progressPrinter(out, o.duration)
	}

	tgt := target{url: u}
	if u == nil {
		stubCfg := stub.DefaultConfig()
		stubCfg.H2C = protocol == engine.H2C
		if tgt, err = builtinTarget(stubCfg, stderr); err != nil { // stubchild.go
			fmt.Fprintf(stderr, "openload: built-in stub: %v\n", err)
			return exitRuntime
		}
		// The built-in stub says what its gate decided: show it unless
		// the user chose otherwise.
		if !fs.Changed("class-header") {
			o.classHeaders = []string{"X-Stub-Source"}
		}
		if !fs.Changed("server-timing") {
			o.serverTiming = true
		}
	}
	if tgt.close != nil {
		defer tgt.close()
	}

	spec := schedule.Spec{Kind: o.arrival, Rate: o.rate, Duration: o.duration, Seed: o.seed}
	if !o.quiet {
		var name string
		if o.closed {
			name = loadtest.ClosedName(engine.Closed{Users: o.connections, Rate: o.rate, Duration: o.duration, Think: o.think})
		} else {
			name = o.replay.name(spec)
		}
		fmt.Fprintf(stderr, "openload: %s → %s %s\n", name, req.method, tgt.url)
	}
	var intervalLog io.Writer
	if hlogw != nil {
		intervalLog = hlogw
	}
	res, findings, err := loadtest.Run(ctx, loadtest.Options{
		IntervalLog:  intervalLog,
		Redact:       o.redact,
		Progress:     progress,
		URL:          tgt.url,
		BuiltinStub:  tgt.builtin,
		StubChild:    tgt.child != nil,
		Method:       req.method,
		Header:       req.header,
		Body:         req.body,
		Schedule:     spec,
		Connections:  o.connections,
		Timeout:      o.timeout,
		Drain:        o.drain,
		Log:          logw,
		ClassHeaders: o.classHeaders,
		ServerTiming: o.serverTiming,
		AutoHeaders:  o.auto.headers(fs),
		Sched:        o.replay.schedule(),
		StampHeader:  o.replay.stampHeader,
		DwellBound:   o.replay.dwellBound,
		Verify:       verify.Options{SendDelayP99: o.sendDelay},
		Closed:       o.closed,
		Think:        o.think,
		Protocol:     protocol,
		MaxStreams:   o.proto.maxStreams,
		Lean:         o.proto.lean(),
		Epoll:        o.proto.epoll(),
		Retry:        o.retry.policy,

		Insecure:        o.faults.insecure,
		FollowRedirects: o.faults.followRedirects,
		MaxBody:         o.faults.maxBody,
	})
	clearProgress()
	if tgt.child != nil && res != nil {
		tgt.close() // the child's CPU time is known once it has exited
		res.Config.StubCPUSeconds = math.Round(tgt.child.stop(false).Seconds()*1000) / 1000
	}
	code := exitOK
	if hlogw != nil {
		if ferr := hlogw.Flush(); ferr != nil {
			fmt.Fprintf(stderr, "openload: --hlog %q: %v\n", o.hlog, ferr)
			code = exitRuntime
		}
	}
	if res == nil {
		fmt.Fprintf(stderr, "openload: %v\n", err)
		return exitRuntime
	}
	if err != nil {
		// The measurement is complete; only a file could not be written.
		fmt.Fprintf(stderr, "openload: %v\n", err)
		code = exitRuntime
	}

	breached, targetFailed := evaluateObjectives(res, o.objectives)
	verdict := verdictCode(res, findings, breached, targetFailed)
	if !o.quiet {
		if err := report.Text(out, res); err != nil {
			fmt.Fprintf(stderr, "openload: report: %v\n", err)
		}
		o.retry.printExpectation(out, &o, res)
		line := report.RunVerdict(res)
		if verdict == exitTargetFailed {
			line += " (exit 5)"
		}
		fmt.Fprintf(out, "\nresult: %s\n", line)
		if targetFailed {
			for _, h := range report.TargetHints(res) {
				fmt.Fprintf(out, "hint:   %s\n", h)
			}
		}
		if breached {
			exit := ""
			if verdict == exitSLOBreached {
				exit = " (exit 4)"
			}
			fmt.Fprintf(out, "objectives: BREACHED%s\n", exit)
		}
	} else {
		if verify.Worst(findings) == verify.Fail {
			for _, f := range findings {
				if f.Severity == verify.Fail {
					fmt.Fprintf(stderr, "openload: check %s failed: %s\n", f.Check, f.Message)
				}
			}
		}
		if line, ok := report.TargetVerdict(res); ok {
			fmt.Fprintf(stderr, "openload: %s\n", line)
			for _, h := range report.TargetHints(res) {
				fmt.Fprintf(stderr, "openload: hint: %s\n", h)
			}
		}
	}
	if o.output != "" {
		w := io.Writer(stdout)
		if outFile != nil {
			w = outFile
		}
		err := recorder.WriteResult(w, res)
		if outFile != nil {
			if cerr := outFile.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(outFile.Name(), o.output)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "openload: --output %q: %v\n", o.output, err)
			code = exitRuntime
		}
	}
	if code != exitOK {
		return code
	}
	return verdict
}

// verdictCode is the exit code the run's outcome calls for, in order of
// precedence: interrupted (130), a check failed: the measurement cannot be
// trusted (1), the target failed: the default objective was breached (5),
// one of the user's objectives was breached (4), else 0. A result or log
// that could not be written (3) comes before all of them.
func verdictCode(res *recorder.Result, findings []verify.Finding, breached, targetFailed bool) int {
	switch {
	case res.Interrupted:
		return exitInterrupted
	case verify.Worst(findings) == verify.Fail:
		return exitCheckFailed
	case targetFailed:
		return exitTargetFailed
	case breached:
		return exitSLOBreached
	}
	return exitOK
}

func describeStub(c stub.Config) string {
	return fmt.Sprintf("%d workers × %v, policy %s", c.Workers, c.Latency, c.Policy)
}
