package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/session"
	"github.com/openload/openload/verify"
)

// Scenarios (--scenarios FILE): several named arrival processes at once,
// as k6 runs several scenarios each with its own arrival-rate executor.
// The file is YAML, read by go.yaml.in/yaml/v3 (the YAML project's own
// continuation of gopkg.in/yaml.v3): a list of scenarios, each a name
// and the run's own flags by their long names, so that a scenario is
// written as a run is typed and checked by the same validation:
//
//	scenarios:
//	  - name: browse
//	    rate: 100
//	    url: http://127.0.0.1:8080/browse
//	  - name: checkout
//	    rate: 5
//	    arrival: poisson
//	    method: POST
//	    header: ["Content-Type: application/json"]
//	    body: '{"cart": 1}'
//	    url: http://127.0.0.1:8080/checkout
//	    slo: ["response.p99<=300ms"]
//
// Flags on the command line apply to every scenario, which may set them
// again; the command line's URL is the one of scenarios without their
// own. A scenario's slo entries are objectives scoped to it
// ("checkout:response.p99<=300ms"). Each scenario has its own
// connections (-c) and schedule; see loadtest.RunScenarios.

// scenarioFile is the file's shape; KnownFields refuses anything else.
type scenarioFile struct {
	Scenarios []map[string]any `yaml:"scenarios"`
}

// notInScenario are the flags a scenario cannot set: the run's outputs
// and modes, which are the whole run's.
var notInScenario = []string{"output", "log", "hlog", "quiet", "help", "shard", "start-at", "closed", "repeats", "scenarios", "yes"}

// scenarioSessions is what a scenario says of its sessions, in the keys
// that are no flag: its steps (internal/session), its conversation
// (conversation.go) and on-failure. Neither steps nor a conversation:
// a scenario of single requests.
type scenarioSessions struct {
	steps     []session.StepSpec
	conv      *conversationYAML // conversation.go
	onFailure string
}

// any reports whether the scenario is a session run.
func (ss scenarioSessions) any() bool { return ss.steps != nil || ss.conv != nil }

// readSteps reads a scenario's steps, each a map of StepSpec's keys.
func readSteps(v any) ([]session.StepSpec, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var steps []session.StepSpec
	if err := dec.Decode(&steps); err != nil {
		return nil, fmt.Errorf("steps: %s", strings.ReplaceAll(oneLine(err), "in type session.StepSpec", "(a step has name, method, url, header, body, think, save)"))
	}
	if len(steps) == 0 {
		return nil, errors.New("steps: an empty list")
	}
	return steps, nil
}

// readScenarios reads the file at path into each scenario's flags, as
// arguments for loadFlags: "--rate=100", … and the URL last; and each
// scenario's sessions, if it has steps.
func readScenarios(path string) (names []string, args [][]string, slos [][]string, sess []scenarioSessions, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: %v", path, unwrapPath(err))
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var sf scenarioFile
	if err := dec.Decode(&sf); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: the file is empty", path)
		}
		return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: %v", path, oneLine(err))
	}
	if len(sf.Scenarios) == 0 {
		return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: no scenario in it (a list under \"scenarios:\")", path)
	}
	for i, sc := range sf.Scenarios {
		name, _ := sc["name"].(string)
		if name == "" {
			return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %d has no name", path, i+1)
		}
		if slices.Contains(names, name) {
			return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %q given twice", path, name)
		}
		if strings.ContainsAny(name, ":, ") {
			return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario name %q: no colon, comma or space (objectives name it as NAME:…)", path, name)
		}
		var a, s []string
		var ss scenarioSessions
		url := ""
		for _, key := range slices.Sorted(mapKeys(sc)) {
			v := sc[key]
			switch {
			case key == "name":
				continue
			case key == "steps":
				if ss.steps, err = readSteps(v); err != nil {
					return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %q: %v", path, name, err)
				}
				continue
			case key == "conversation":
				if ss.conv, err = readConversation(v); err != nil {
					return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %q: %v", path, name, err)
				}
				continue
			case key == "on-failure":
				ss.onFailure = fmt.Sprint(v)
				continue
			case key == "url":
				url = fmt.Sprint(v)
				continue
			case key == "slo":
				for _, x := range listOf(v) {
					s = append(s, name+":"+x)
				}
				continue
			case slices.Contains(notInScenario, key):
				return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %q: --%s is the whole run's: give it on the command line", path, name, key)
			}
			for _, x := range listOf(v) {
				a = append(a, "--"+key+"="+x)
			}
		}
		if url != "" {
			a = append(a, url)
		}
		switch {
		case ss.onFailure != "" && !ss.any():
			return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %q: on-failure without steps or a conversation", path, name)
		case ss.steps != nil && ss.conv != nil:
			return nil, nil, nil, nil, fmt.Errorf("--scenarios %q: scenario %q: steps and a conversation: a scenario's sessions are one or the other", path, name)
		}
		names, args, slos, sess = append(names, name), append(args, a), append(slos, s), append(sess, ss)
	}
	return names, args, slos, sess, nil
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// listOf is a YAML value as flag values: each item of a list, or the
// value itself.
func listOf(v any) []string {
	if xs, ok := v.([]any); ok {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = fmt.Sprint(x)
		}
		return out
	}
	return []string{fmt.Sprint(v)}
}

// oneLine is a YAML error in one line, each of its errors naming its
// line ("line 2: field rat not found …").
func oneLine(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.ReplaceAll(strings.Join(te.Errors, "; "), "in type main.scenarioFile", "(the file holds a list under \"scenarios:\")")
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// runScenarios runs --scenarios: each scenario's flags are the command
// line's (args, --scenarios dropped) followed by its own, parsed and
// validated as a run's; then all run at once (loadtest.RunScenarios) and
// the union is reported, judged and written as one run's result.
func runScenarios(ctx context.Context, top *loadOptions, topFS *pflag.FlagSet, args []string, stdout, stderr io.Writer) int {
	path := top.scenarios
	for _, name := range []string{"rate", "stages", "arrivals", "closed", "repeats"} {
		if topFS.Changed(name) {
			return usageError(stderr, "--%s with --scenarios: each scenario has its own schedule; set it in the file", name)
		}
	}
	names, scArgs, scSlos, scSess, err := readScenarios(path)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	objs, err := parseObjectives(append(slices.Clone(top.slos), slices.Concat(scSlos...)...))
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	if err := checkOutputs(output("--output", top.output), output("--log", top.logFile), output("--hlog", top.hlog)); err != nil {
		return usageError(stderr, "%v", err)
	}
	if err := top.metrics.validate(topFS); err != nil { // one server for every scenario
		return usageError(stderr, "%v", err)
	}
	if top.targets.file == "-" {
		return usageError(stderr, "--targets - with --scenarios: standard input is read once, and each scenario reads its targets: give a file")
	}
	if top.logFile == "-" {
		return usageError(stderr, "--log - with --scenarios: each scenario writes a log of its own; give a file name (run.csv writes run.NAME.csv)")
	}
	if top.hlog != "" {
		return usageError(stderr, "--hlog with --scenarios: an interval log is one schedule's; give --log, which writes one log per scenario")
	}
	base := withoutFlag(withoutFlag(args, "scenarios"), "slo") // objectives are judged on the whole, scoped or not
	scs := make([]loadtest.Scenario, len(names))
	opts := make([]*loadOptions, len(names))
	for i, name := range names {
		o := &loadOptions{}
		fs := loadFlags(o)
		a := append(slices.Clone(base), scArgs[i]...)
		if topFS.NArg() == 1 && !hasURL(scArgs[i]) {
			a = append(withoutArg(a, topFS.Arg(0)), topFS.Arg(0))
		} else {
			a = withoutArg(a, topFS.Arg(0))
		}
		if err := parseFlags(fs, a); err != nil {
			return usageError(stderr, "--scenarios %q: scenario %q: %v", path, name, err)
		}
		if fs.NArg() != 1 && o.targets.file == "" && scSess[i].steps == nil { // steps may each have a whole URL
			return usageError(stderr, "--scenarios %q: scenario %q has no url: give it one (or targets), or a URL on the command line for all", path, name)
		}
		o.bodies.conversation = scSess[i].conv != nil // its turns take --extra-body
		if err := o.validate(fs); err != nil {
			return usageError(stderr, "--scenarios %q: scenario %q: %v", path, name, err)
		}
		if o.metrics != top.metrics {
			return usageError(stderr, "--scenarios %q: scenario %q: --metrics-* apply to the whole run: give them on the command line", path, name)
		}
		r := &o.run
		if scSess[i].any() {
			if err := sessionRun(fs, r, scSess[i], &o.bodies); err != nil {
				return usageError(stderr, "--scenarios %q: scenario %q: %v", path, name, err)
			}
		}
		if top.logFile != "" {
			logPath := scenarioPath(top.logFile, name)
			f, err := os.Create(logPath)
			if err != nil {
				return usageError(stderr, "--log %q: %v", logPath, unwrapPath(err))
			}
			defer f.Close()
			r.Log = newLog(r, f)
		}
		scs[i], opts[i] = loadtest.Scenario{Name: name, Options: *r}, o
	}
	if err := checkScopes(objs, scenarioScopes(scs)); err != nil {
		return usageError(stderr, "%v", err)
	}
	// One server, a series of each scenario's: each is a run of its own.
	s, err := loadtest.Start(ctx, loadtest.Setup{
		Options:   loadtest.Options{Verify: top.run.Verify, Objectives: objs}, // the whole's
		Scenarios: scs,
		Live:      top.metrics.live(top, stderr),
		Prepare: func(ctx context.Context, name string, r *loadtest.Options) error {
			return opts[slices.Index(names, name)].prepare(ctx, name, r)
		},
	})
	if err != nil {
		return startFailed(stderr, "", err)
	}
	defer s.Close()
	if !top.quiet {
		for i, sc := range s.Scenarios {
			what := sc.Options.Method + " " + sc.Options.URL.String()
			if ss := sc.Options.Sessions; ss != nil {
				what = fmt.Sprintf("sessions of %d steps (%s) at %s", len(ss.StepNames()), strings.Join(ss.StepNames(), " → "), sc.Options.URL)
			}
			fmt.Fprintf(stderr, "openload: scenario %s: %s → %s\n", sc.Name, opts[i].replay.name(sc.Options.Schedule), what)
		}
	}
	oc, err := s.RunScenarios(ctx)
	return top.render(oc, err, exitOK, stdout, stderr) // load.go
}

// sessionFlags are the flags a scenario of steps cannot take: what they
// set is each step's own.
var sessionFlags = []string{"method", "body", "body-file", "targets", "targets-format", "values", "dataset", "prompt-tokens", "output-tokens", "retries", "warmup", "closed"}

// sessionRun makes r a session run of ss's steps: relative step URLs
// are under the scenario's URL, its headers go with every step, and its
// seed draws the think times.
func sessionRun(fs *pflag.FlagSet, r *loadtest.Options, ss scenarioSessions, b *bodyOptions) error {
	for _, name := range sessionFlags {
		if fs.Lookup(name) != nil && fs.Changed(name) {
			if ss.conv != nil {
				return fmt.Errorf("--%s with a conversation: its turns are its bodies", name)
			}
			return fmt.Errorf("--%s with steps: each step says its own", name)
		}
	}
	if ss.conv != nil {
		// Synthetic conversations are drawn anew every run unless --seed
		// is given, as generated prompts are (promptSeed).
		return conversationRun(r, ss.conv, b, ss.onFailure, promptSeed(fs, r)) // conversation.go
	}
	plan, err := session.Compile(session.Spec{Steps: ss.steps, OnFailure: ss.onFailure, Base: r.URL, Header: r.Header, Seed: r.Schedule.Seed})
	if err != nil {
		return err
	}
	if r.URL == nil {
		// The engine's connections are set up for the first step's
		// server: its URL must then be a whole one.
		u, err := url.Parse(ss.steps[0].URL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("no url, and step 1 (%s) has no whole one: give the scenario a url, or the step an http:// one", ss.steps[0].Name)
		}
		r.URL = u
	}
	r.Sessions = plan
	return nil
}

// scenarioScopes are what objectives may name in a run of scs: a
// scenario, or a step of one (SCENARIO:STEP:…), known once the steps are
// (a dataset's turns included).
func scenarioScopes(scs []loadtest.Scenario) []string {
	var scopes []string
	for _, sc := range scs {
		scopes = append(scopes, sc.Name)
		if ss := sc.Options.Sessions; ss != nil {
			for _, step := range ss.StepNames() {
				scopes = append(scopes, sc.Name+":"+step)
			}
		}
	}
	return scopes
}

// scenarioPath is the log of scenario name next to path: run.csv →
// run.browse.csv.
func scenarioPath(path, name string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + name + ext
}

// hasURL reports whether a scenario's arguments end in its URL.
func hasURL(a []string) bool { return len(a) > 0 && !strings.HasPrefix(a[len(a)-1], "-") }

// withoutArg drops the argument x (the command line's URL) from a.
func withoutArg(a []string, x string) []string {
	if x == "" {
		return a
	}
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return s == x })
}

// withoutFlag drops --name and its value from a command line.
func withoutFlag(a []string, name string) []string {
	var out []string
	for i := 0; i < len(a); i++ {
		s := a[i]
		if s == "-"+name || s == "--"+name {
			i++ // its value
			continue
		}
		if strings.HasPrefix(s, "-"+name+"=") || strings.HasPrefix(s, "--"+name+"=") {
			continue
		}
		out = append(out, s)
	}
	return out
}

// checkScopes refuses an objective scoped to a name that is no scenario.
func checkScopes(objs []verify.Objective, names []string) error {
	if err := verify.CheckScopes(objs, names); err != nil {
		return fmt.Errorf("--slo: %v", err)
	}
	return nil
}
