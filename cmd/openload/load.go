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
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/mix"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
	"github.com/openload/openload/verify"
)

// maxRate is the largest rate openload accepts: far above what one machine
// can send, low enough to catch a slipped finger.
const maxRate = 10_000_000

// maxRequests bounds rate × duration without --yes, so that a typo such as
// -rate 1600000 does not become an accidental flood.
const maxRequests = 5_000_000

// loadOptions are the flags of a load run. Each flag that sets a value of
// the run is bound to run, the loadtest.Options the run is given; the
// other fields are the command line's own: values parsed into run's by
// validate (headers, body, method, the URL, the protocol flags, the
// arrivals file, --retry-on), the outputs, and guards.
type loadOptions struct {
	run       loadtest.Options
	method    string
	headers   []string
	body      string
	bodyFile  string
	output    string
	logFile   string
	quiet     bool
	help      bool
	slos      []string
	yes       bool
	hlog      string
	replay    replayOptions  // replay.go
	proto     protoOptions   // proto.go
	retry     retryOptions   // retryflags.go
	auto      autoOptions    // autoheaders.go
	shard     shardOptions   // shardflags.go
	stream    streamOptions  // streamflags.go
	bodies    bodyOptions    // bodyflags.go
	prompts   promptOptions  // promptflags.go
	scenarios string         // --scenarios FILE (scenarios.go)
	targets   targetsOptions // targetsflags.go
	grpc      grpcOptions    // grpcflags.go
	stages    stagesOptions  // stagesflags.go
	metrics   metricsOptions // metricsflags.go
	// plan is what the bodies made serve when the run is one of a
	// sweep's (set by its check; sweep.go); nil for one run or
	// --repeats' (promptOptions.plan).
	plan *sweep.Plan
}

// loadFlags registers the flags of a load run, group by group as the help
// shows them (help.go); sub-options register theirs in their own files.
func loadFlags(o *loadOptions) *pflag.FlagSet {
	fs, _ := boundLoadFlags(o)
	return fs
}

// boundLoadFlags is loadFlags, with the binding its definitions make of
// each flag to the fields of loadtest.Options it sets (loadFieldFlags).
func boundLoadFlags(o *loadOptions) (*pflag.FlagSet, scopeBindings) {
	fs := newFlagSet("openload")
	bs := scopeBindings{}
	b := bs.in(loadFields)
	r := &o.run
	inGroup(fs, groupLoad, func() {
		// --rate is the --expect-* model's λ too.
		fs.Float64VarP(&r.Schedule.Rate, bs.in(expectFields).bind(b.bind("rate", "Schedule.Rate"), "Rate"), "r", 0, "requests per second for the whole run (required, > 0, unless --arrivals; optional with --closed); inf with --requests: all at once")
		fs.DurationVarP(&r.Schedule.Duration, b.bind("duration", "Schedule.Duration"), "d", 10*time.Second, "length of the schedule (with --arrivals: the file's span)")
		fs.Int64VarP(&r.Schedule.Count, b.bind("requests", "Schedule.Count"), "n", 0, "with --rate inf: send this many requests at once, bounded by -c (the throughput probe, as vLLM's --request-rate inf); the wait for a connection is their send delay")
		fs.StringVar(&r.Schedule.Kind, b.bind("arrival", "Schedule.Kind"), schedule.Constant, "") // usage below: arrivalUsage
		fs.Uint64Var(&r.Schedule.Seed, b.bind("seed", "Schedule.Seed", "Retry.Seed", "BodySeed", "TargetSeed"), 1, seedUsage())
		o.stages.flags(fs, b, &r.Schedule, &r.Warmup)
		o.replay.scheduleFlags(fs, b, bs.in(replayFields))
		o.shard.flags(fs, b) // shardflags.go
		fs.IntVarP(&r.Connections, b.bind("connections", "Connections"), "c", defaultConnections, "upper bound on connections and requests in flight; waiting for one is send delay (with --closed: the number of users; without -c, a model server's answers get enough for one --timeout at the peak rate)")
		fs.BoolVar(&r.Closed, b.bind("closed", "Closed"), false, "closed loop, to see what closed-loop tools report: -c users each send, wait for the response, send again; with --rate, paced to it, skipping the slots missed while waiting")
		fs.DurationVar(&r.Think, b.bind("think", "Think"), 0, "with --closed: pause after each response before the user sends again")
		fs.DurationVar(&r.Drain, b.bind("drain", "Drain"), 10*time.Second, "how long to wait for in-flight requests after the last scheduled send")
		fs.BoolVar(&o.yes, "yes", false, "allow a run of more than 5,000,000 requests (rate × duration)")
		fs.StringVar(&o.scenarios, "scenarios", "", "run the scenarios of this YAML `file` at once, each a named arrival process with its own flags (rate, arrival, url, targets, …); the other flags apply to all")
	})
	inGroup(fs, groupRequest, func() {
		fs.StringVarP(&o.method, b.bind("method", "Method"), "m", "", "HTTP method (default GET, or POST with a body)")
		fs.StringArrayVarP(&o.headers, b.bind("header", "Header"), "H", nil, "request `header` 'Name: value' (repeatable)")
		fs.StringVar(&o.body, b.bind("body", "Body"), "", "request body")
		fs.StringVar(&o.bodyFile, b.bind("body-file", "Bodies"), "", "read the request body from this `file`; a .jsonl file holds one JSON request per line, sent in order (or --body-sample)")
		o.bodies.flags(fs)     // bodyflags.go
		o.prompts.flags(fs)    // promptflags.go
		o.targets.flags(fs, b) // targetsflags.go
		o.grpc.flags(fs)       // grpcflags.go
		fs.DurationVar(&r.Timeout, b.bind("timeout", "Timeout"), 30*time.Second, "per-request timeout, from the moment it is sent")
		o.stream.flags(fs, b, r) // streamflags.go
	})
	o.replay.checkFlags(fs, b, r) // --stamp-header (request), --dwell-bound (checks)
	inGroup(fs, groupOutput, func() {
		fs.StringVarP(&o.output, "output", "o", "", "write the JSON result to this `file` ('-' for stdout; the report then goes to stderr)")
		fs.StringVar(&o.logFile, b.bind("log", "Log"), "", "stream one CSV line per request to this `file` ('-' for stdout; the report then goes to stderr)")
		fs.StringVar(&o.hlog, b.bind("hlog", "IntervalLog"), "", "write HdrHistogram's interval log (one interval per second; tags response, service, send_delay) to this `file` ('-' for stdout)")
		fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing but errors and failed checks")
		fs.StringArrayVar(&r.ClassHeaders, b.bind("class-header", "ClassHeaders"), nil, "group responses by this response `header`'s value (repeatable, up to 4); "+autoClassHeaders()+" needs no flag: its table appears when responses carry it")
		fs.BoolVar(&r.ServerTiming, b.bind("server-timing", "ServerTiming"), false, "report each Server-Timing metric next to service time; needs no flag when responses carry it; =false: never read it")
		o.auto.flags(fs)
		o.metrics.flags(fs) // metricsflags.go
		fs.StringArrayVar(&r.Redact, b.bind("redact", "Redact"), nil, "also redact this request `header`'s value in the result (Authorization, Cookie and Proxy-Authorization always are)")
	})
	inGroup(fs, groupChecks, func() {
		fs.StringArrayVar(&o.slos, b.bind("slo", "Objectives"), nil, "`objective` checked at the end, e.g. 'response.p99<=200ms' (repeatable); a breach exits 4; without one on errors, errors<=1% is checked and its breach exits 5")
		fs.DurationVar(&r.Verify.SendDelayP99, b.bind("send-delay-budget", "Verify.SendDelayP99"), verify.DefaultSendDelayP99, "warn when send delay p99 exceeds this")
		o.stream.objectiveFlags(fs, b) // --slo-request, streamflags.go
	})
	inGroup(fs, groupClient, func() {
		o.proto.flags(fs, b, &r.Config)
		faultFlags(fs, b, &r.Config) // safety.go
		resendFlag(fs, b, &r.Config) // resendflags.go
	})
	o.retry.flags(fs, b, bs.in(expectFields), &r.Retry) // retries, model expectations
	helpFlag(fs, &o.help)
	// Written once every flag is bound: it names the parameters' flags.
	fs.Lookup("arrival").Usage = arrivalUsage(b) // processflags.go
	return fs, bs
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
	if err := mix.CheckPort(u); err != nil {
		return nil, fmt.Errorf("URL %q: %v", raw, err)
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

// validate checks the command line and completes o.run from it: the
// values typed for the command line (the URL, -H, the body, the method,
// the protocol flags, --retry-on, the arrivals file) are parsed into
// o.run's, and then o.run.Validate checks every value of the run, each in
// the type that owns it (engine.Config, schedule.Spec, retry.Policy, …),
// its errors naming flags through fieldFlags. What validate checks itself
// is the command line's: flags that exclude or need one another, a flag
// given with the value that means unset, guards against a slipped finger
// (--rate's ceiling, --yes), and the values only the command line has.
// Every error names the flag and the value.
func (o *loadOptions) validate(fs *pflag.FlagSet) error {
	r := &o.run
	if err := o.replay.validate(fs, o); err != nil {
		return err
	}
	if err := o.metrics.validate(fs); err != nil { // metricsflags.go
		return err
	}
	if err := o.shard.validate(fs, o); err != nil {
		return err
	}
	if err := o.stages.validate(fs, o); err != nil {
		return err
	}
	if err := o.validateSchedule(fs); err != nil {
		return err
	}
	var err error
	if r.Objectives, err = parseObjectives(o.slos); err != nil {
		return err
	}
	if err := o.retry.validate(fs, o); err != nil {
		return err
	}
	if err := checkFaultFlags(fs, &r.Config); err != nil {
		return err
	}
	if err := o.request(); err != nil {
		return err
	}
	if err := o.prompts.validate(fs, o); err != nil { // promptflags.go
		return err
	}
	if err := o.stream.validate(fs, r, o.bodyFile); err != nil { // streamflags.go
		return err
	}
	if err := o.grpc.take(fs, o); err != nil { // grpcflags.go
		return err
	}
	if err := o.bodies.validate(fs, o); err != nil { // bodyflags.go
		return err
	}
	if err := o.validateTarget(fs); err != nil {
		return err
	}
	// ^C abandons validate (validateInterruptibly); --timeout bounds
	// asking the server's reflection.
	if err := o.grpc.finish(context.Background(), o); err != nil { // grpcflags.go
		return err
	}
	o.chooseConnections(fs) // conns.go
	r.Lean, r.Epoll = o.proto.lean(), o.proto.epoll()
	r.AutoHeaders = o.auto.headers(fs)
	if err := r.Validate(); err != nil {
		return flagError(loadFields, err)
	}
	return o.retry.validateExpect(fs, o)
}

// validateSchedule checks the schedule's flags as typed: a rate (or
// stages, or a closed loop, or an arrivals file), the command line's own
// guards, and, with a rate, the schedule itself and --yes.
func (o *loadOptions) validateSchedule(fs *pflag.FlagSet) error {
	r := &o.run
	staged := r.Schedule.Stages != ""
	rated := fs.Changed("rate") || staged
	switch {
	case !rated && !r.Closed && o.replay.arrivals == "":
		return errors.New("--rate is required (requests per second for the whole run), e.g. -rate 160")
	case rated && r.Schedule.Rate > maxRate && !math.IsInf(r.Schedule.Rate, 1): // +Inf: not finite (schedule.Spec)
		return fmt.Errorf("--rate %v is absurd: at most %d per second", r.Schedule.Rate, maxRate)
	case r.Verify.SendDelayP99 == 0: // verify.Options would read 0 as its default
		return errors.New("--send-delay-budget must be > 0, got 0s")
	case o.body != "" && o.bodyFile != "":
		return errors.New("--body and --body-file are exclusive: give one")
	case fs.Changed("think") && !r.Closed:
		return errors.New("--think applies to --closed runs only: an open schedule does not wait for responses")
	}
	if err := o.validateAtOnce(fs); err != nil {
		return err
	}
	if rated {
		// Checked now, as typed, whatever the mode: with --closed a rate
		// of 0 would otherwise mean unpaced.
		if err := r.Schedule.Validate(); err != nil {
			return flagError(loadFields, field.In("Schedule", err))
		}
		if n := r.Schedule.Expected(); n > maxRequests && !o.yes {
			if staged {
				return fmt.Errorf("--stages %s: ∫λ dt = %.0f requests is more than %d: add --yes if you mean it", o.stages.stages, n, maxRequests)
			}
			if r.Schedule.IsAtOnce() {
				return fmt.Errorf("--requests %d is more than %d: add --yes if you mean it", r.Schedule.Count, maxRequests)
			}
			return fmt.Errorf("--rate %v × --duration %v = %.0f requests is more than %d: add --yes if you mean it",
				r.Schedule.Rate, r.Schedule.Duration, n, maxRequests)
		}
	}
	return nil
}

// validateAtOnce checks the throughput probe's flags (--rate inf with
// --requests N) and clears the default --duration it does not take: the
// run lasts as long as the server takes to answer N. Without --requests,
// schedule.Spec refuses +Inf and says to add it.
func (o *loadOptions) validateAtOnce(fs *pflag.FlagSet) error {
	r := &o.run
	if !r.Schedule.IsAtOnce() || !fs.Changed("requests") {
		return nil
	}
	switch {
	case fs.Changed("duration"):
		return fmt.Errorf("--duration does not apply to --rate inf: the run is --requests %d at once and lasts as long as the server takes (bound it with --drain)", r.Schedule.Count)
	case r.Closed:
		return errors.New("--rate inf sends every request at once: --closed paces its users to a finite --rate, or to none")
	}
	r.Schedule.Duration = 0
	return nil
}

// validateTarget reads the URL and checks what depends on it: the
// request mix, the objectives' scopes and the protocol.
func (o *loadOptions) validateTarget(fs *pflag.FlagSet) error {
	r := &o.run
	var err error
	if fs.NArg() == 1 {
		if r.URL, err = parseURL(fs.Arg(0)); err != nil {
			return err
		}
	}
	if err := o.targets.validate(fs, o); err != nil { // targetsflags.go
		return err
	}
	if err := verify.CheckScopes(r.Objectives, r.TargetNames()); err != nil {
		return fmt.Errorf("--slo: %v", err)
	}
	if r.Protocol, err = o.proto.protocol(fs, r.URL, o.grpc.on()); err != nil {
		return err
	}
	return nil
}

// request parses -H, the body and the method into o.run.
func (o *loadOptions) request() error {
	r := &o.run
	r.Header = http.Header{}
	for _, h := range o.headers {
		if err := parseHeader(r.Header, h); err != nil {
			return err
		}
	}
	r.Body = []byte(o.body)
	if o.bodyFile != "" {
		b, err := os.ReadFile(o.bodyFile)
		if err != nil {
			return fmt.Errorf("--body-file %q: %v", o.bodyFile, unwrapPath(err))
		}
		r.Body = b
	}
	r.Method = strings.ToUpper(o.method)
	if r.Method == "" {
		r.Method = http.MethodGet
		if len(r.Body) > 0 {
			r.Method = http.MethodPost
		}
	}
	return nil
}

// createOrStdout creates the file path, or for "-" returns stdout, whose
// Close does nothing: a log streamed as the run goes (--log -, --hlog -)
// goes where -o - sends a result.
func createOrStdout(path string, stdout io.Writer) (io.WriteCloser, error) {
	if path == "-" {
		return nopCloser{stdout}, nil
	}
	return os.Create(path)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

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
	if err := parseFlags(fs, args); err != nil {
		return usageError(stderr, "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, usageText())
		return exitOK
	}
	if fs.NArg() > 1 {
		return usageError(stderr, "one URL at most, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	if o.scenarios != "" {
		return runScenarios(ctx, &o, fs, args, stdout, stderr) // scenarios.go
	}
	o.shard.done = ctx.Done() // a wait for --start-at @FILE ends on ^C
	if err := validateInterruptibly(ctx, &o, fs, stderr); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "openload: interrupted while reading the inputs: nothing was sent")
			return exitInterrupted
		}
		return usageError(stderr, "%v", err)
	}
	if o.stages.repeats > 1 {
		return runRepeats(ctx, &o, fs, stdout, stderr) // repeats.go
	}
	r := &o.run
	if fs.Changed("fast-http1") {
		fmt.Fprintln(stderr, "openload: --fast-http1 is deprecated: the lean HTTP/1.1 client is the default now (--net-http turns it off)")
	}

	// Check every output before anything starts, so a bad path costs
	// nothing; the log and the interval log are written as the run goes.
	if err := checkOutputs(output("--output", o.output), output("--log", o.logFile), output("--hlog", o.hlog)); err != nil {
		return usageError(stderr, "%v", err)
	}
	if err := oneOnStdout(output("--output", o.output), output("--log", o.logFile), output("--hlog", o.hlog)); err != nil {
		return usageError(stderr, "%v", err)
	}
	if o.logFile != "" {
		logFile, err := createOrStdout(o.logFile, stdout)
		if err != nil {
			return usageError(stderr, "--log %q: %v", o.logFile, unwrapPath(err))
		}
		defer logFile.Close()
		r.Log = newLog(r, logFile) // streamflags.go
	}
	var hlogw *bufio.Writer
	if o.hlog != "" {
		f, err := createOrStdout(o.hlog, stdout)
		if err != nil {
			return usageError(stderr, "--hlog %q: %v", o.hlog, unwrapPath(err))
		}
		defer f.Close()
		hlogw = bufio.NewWriter(f)
		r.IntervalLog = hlogw
	}
	out := o.reportTo(stdout, stderr)
	setup := o.setup(fs, stderr)
	if !o.quiet && !r.Closed && isTerminal(out) {
		setup.Options.Progress, setup.Ended = progressPrinter(out, r.Schedule.Duration)
	}
	s, err := loadtest.Start(ctx, setup)
	if err != nil {
		return startFailed(stderr, "", err)
	}
	defer s.Close() // once the result is written: metrics are served until then
	if !o.quiet {
		var name string
		if s.Options.Closed {
			name = loadtest.ClosedName(s.Options.ClosedLoop())
		} else {
			name = o.replay.name(s.Options.Schedule)
		}
		name = describeShard(name, s.Options.Shard, s.Options.StartAt) // shardflags.go
		fmt.Fprintf(stderr, "openload: %s → %s\n", name, result.SendsOf(s.Options.Method, s.Options.URL.String(), s.Options.Request))
	}
	oc, err := s.Run(ctx) // the findings are in the result's checks
	code := exitOK
	if hlogw != nil {
		if ferr := hlogw.Flush(); ferr != nil {
			fmt.Fprintf(stderr, "openload: --hlog %q: %v\n", o.hlog, ferr)
			code = exitRuntime
		}
	}
	return o.render(oc, err, code, stdout, stderr)
}

// validateInterruptibly is o.validate, given up when ctx ends: the files
// it reads may be a pipe or a terminal (--targets -, a generator piped in,
// a FIFO) that never ends, and one signal must stop openload then as it
// stops a run. With --lazy, --targets is read up to its first target
// here, the rest as the run sends (readLazily), where the same signal
// stops the run.
func validateInterruptibly(ctx context.Context, o *loadOptions, fs *pflag.FlagSet, stderr io.Writer) error {
	if o.targets.file == "-" {
		if f, ok := stdin.(*os.File); ok && isTerminal(f) {
			fmt.Fprintln(stderr, "openload: reading targets from the terminal: end them with Ctrl-D (Ctrl-C stops)")
		}
	}
	o.targets.stdin = stdin // read here: validate may outlive this call
	done := make(chan error, 1)
	go func() { done <- o.validate(fs) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reportTo is where the report goes: stdout, unless the result or a log
// does (-o -, --log -, --hlog -).
func (o *loadOptions) reportTo(stdout, stderr io.Writer) io.Writer {
	if o.output == "-" || o.logFile == "-" || o.hlog == "-" {
		return stderr
	}
	return stdout
}

// render prints a run's outcome (its report and verdict), writes its
// result, and returns the exit code: code if the run already owes one
// (an output that failed), else the verdict's. err is the run's: with no
// result it could not be carried out; with one, a file could not be
// written.
func (o *loadOptions) render(oc loadtest.Outcome, err error, code int, stdout, stderr io.Writer) int {
	res := oc.Result
	if res == nil {
		fmt.Fprintf(stderr, "openload: %v\n", err)
		return exitRuntime
	}
	if err != nil {
		// The measurement is complete; only a file could not be written.
		fmt.Fprintf(stderr, "openload: %v\n", err)
		code = exitRuntime
	}
	out := o.reportTo(stdout, stderr)
	verdict := exitOf(oc.Class)
	if !o.quiet {
		if err := report.TextWrapped(out, res, wrapWidth(out)); err != nil {
			fmt.Fprintf(stderr, "openload: report: %v\n", err)
		}
		o.retry.printExpectation(out, o, res)
	}
	writeVerdict(out, stderr, res, verdict, o.quiet, "")
	// The result is written through a temporary file renamed into place,
	// so that an interrupted openload never leaves half a result; when it
	// cannot be written, the error says where it is kept.
	if err := writeOutput("--output", o.output, stdout, quietNotice(stderr, o.quiet), func(w io.Writer) error { return result.Write(w, res) }); err != nil {
		fmt.Fprintf(stderr, "openload: %v\n", err)
		code = exitRuntime
	}
	if code != exitOK {
		return code
	}
	return verdict
}

// setup is what a run of o describes, for loadtest.Start: the run, its
// live metrics, the built-in stub it is sent to without a URL, and the
// preparation of its request.
func (o *loadOptions) setup(fs *pflag.FlagSet, stderr io.Writer) loadtest.Setup {
	return loadtest.Setup{Options: o.run, Live: o.metrics.live(o, stderr), StartStub: startStub(fs, stderr), Prepare: o.prepare}
}

// startFailed says why loadtest.Start failed, in the words of the step
// that did, and returns the exit code: a --metrics-addr that cannot be
// bound is the command line's; what prefixes a preparation's error
// ("sweep: ").
func startFailed(stderr io.Writer, what string, err error) int {
	var se *loadtest.StartError
	switch {
	case !errors.As(err, &se):
	case se.Stage == loadtest.StageLive:
		fmt.Fprintf(stderr, "openload: %v\n", se.Err)
		return exitUsage
	case se.Stage == loadtest.StageStub:
		fmt.Fprintf(stderr, "openload: built-in stub: %s\n", stubMessage(se.Err))
		return exitRuntime
	}
	fmt.Fprintf(stderr, "openload: %s%v\n", what, err)
	return exitRuntime
}

func describeStub(c stub.Config) string {
	return fmt.Sprintf("%d workers × %v, policy %s", c.Workers, c.Latency, c.Policy)
}
