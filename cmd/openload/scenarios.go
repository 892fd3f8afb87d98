package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/mix"
	"github.com/openload/openload/internal/session"
	"github.com/openload/openload/result"
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
// As k6 writes them, "scenarios:" may also be a map of scenarios by name,
// run in the file's order; k6's keys that mean the same are read
// (startTime as start-after, startRate, timeUnit 1s, an arrival-rate
// executor) and the others refused with what to write (k6Key).
//
// Flags on the command line apply to every scenario, which may set them
// again; the command line's URL is the one of scenarios without their
// own, its --duration that of scenarios without stages or arrivals. A scenario's slo entries are objectives scoped to it
// ("checkout:response.p99<=300ms"). Each scenario has its own
// connections (-c) and schedule; see loadtest.RunScenarios.

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

// scenarioDef is one scenario of the file: its flags as arguments for
// loadFlags ("--rate=100", …, its URL last), its objectives, its
// sessions and its start offset; and where the file holds it and each
// of its keys, so that an error names its line.
type scenarioDef struct {
	name  string
	line  int            // the scenario's first line
	keys  map[string]int // each key's line, by the flag's name
	args  []string
	slos  []string
	sess  scenarioSessions
	start time.Duration // start-after (k6's startTime): from the run's start
}

// errorf is an error of the scenario in the file at path, at the line of
// the first key its text names as a flag ("--rate …"), else at the
// scenario's own.
func (d scenarioDef) errorf(path string, err error) error {
	line := d.line
	var ak atKey
	if errors.As(err, &ak) {
		line = d.keys[ak.key]
	} else {
		for _, m := range flagInText.FindAllStringSubmatch(err.Error(), -1) {
			if l, ok := d.keys[m[1]]; ok {
				line = l
				break
			}
		}
	}
	return fmt.Errorf("--scenarios %q: line %d: scenario %q: %v", path, line, d.name, err)
}

// flagInText finds the flags an error names ("--rate must be > 0").
var flagInText = regexp.MustCompile(`--([A-Za-z][A-Za-z0-9-]*)`)

// atKey is an error about a scenario's key that does not name it as a
// flag.
type atKey struct {
	key string
	err error
}

func (e atKey) Error() string { return e.err.Error() }

// k6Keys are the keys of a k6 scenario that openload spells or does
// otherwise, each with what to write instead. The keys that mean the
// same are read as openload's: startTime (start-after), startRate (the
// rate stages start from), timeUnit 1s, and an arrival-rate executor.
var k6Keys = map[string]string{
	"tags":             "the scenario's name labels its requests, results and objectives (NAME:metric…)",
	"env":              "openload runs no script: a scenario's requests are its url, targets or steps",
	"exec":             "openload has no VUs and runs no script: a scenario's requests are its url, targets or steps",
	"preAllocatedVUs":  "openload has no VUs: arrivals never wait for a free user; connections (-c) bounds the connections",
	"maxVUs":           "openload has no VUs: arrivals never wait for a free user; connections (-c) bounds the connections",
	"vus":              "openload has no VUs: a scenario is an arrival rate (rate, or stages); connections (-c) bounds the connections",
	"startVUs":         "openload has no VUs: a scenario is an arrival rate (rate, or stages); connections (-c) bounds the connections",
	"iterations":       "a scenario is an arrival rate for a time: give rate and duration (or stages)",
	"maxDuration":      "a scenario lasts its duration (or its stages)",
	"gracefulStop":     "openload stops sending at the schedule's end and waits for the answers in flight, each up to its timeout",
	"gracefulRampDown": "openload stops sending at the schedule's end and waits for the answers in flight, each up to its timeout",
}

// k6Executors are k6's executors openload's scenarios are: an arrival
// rate, constant (rate) or ramping (stages).
var k6Executors = []string{"constant-arrival-rate", "ramping-arrival-rate"}

// k6Key reads a k6 key that means what an openload key does, and refuses
// the others with what to write instead: the key to read it as ("" to
// drop it), or an error.
func k6Key(key string, v any, sc map[string]any) (string, error) {
	switch key {
	case "startTime":
		return "start-after", nil
	case "startRate":
		if _, ok := sc["stages"]; !ok {
			return "", errors.New("startRate (k6's) is the rate stages start from: give stages (ramping to each stage's rate from it), or give rate for a constant one")
		}
		if _, ok := sc["rate"]; ok {
			return "", errors.New("startRate (k6's) and rate: with stages, rate is the rate they start from: give one")
		}
		return "rate", nil
	case "timeUnit":
		if d, err := time.ParseDuration(fmt.Sprint(v)); err != nil || d != time.Second {
			return "", fmt.Errorf("timeUnit %v (k6's): openload's rates are per second: give the rate per second", v)
		}
		return "", nil
	case "executor":
		_, stages := sc["stages"]
		switch e := fmt.Sprint(v); {
		case !slices.Contains(k6Executors, e):
			return "", fmt.Errorf("executor %v (k6's): openload's scenarios are open arrival rates, k6's constant-arrival-rate (give rate) or ramping-arrival-rate (give stages); it has no VUs", v)
		case e == "ramping-arrival-rate" && !stages:
			return "", errors.New("executor ramping-arrival-rate (k6's) without stages: give them")
		case e == "constant-arrival-rate" && stages:
			return "", errors.New("executor constant-arrival-rate (k6's) with stages: that is ramping-arrival-rate")
		}
		return "", nil
	}
	if say, ok := k6Keys[key]; ok {
		return "", fmt.Errorf("%s (k6's): %s", key, say)
	}
	return key, nil
}

// isList reports whether a YAML value is a list.
func isList(v any) bool { _, ok := v.([]any); return ok }

// k6Stages is k6's list of stages, each {duration, target}, as --stages
// writes them: "30s:100,1m:100". They mean the same (a linear ramp to
// each target from the previous).
func k6Stages(v any) (string, error) {
	var parts []string
	for i, x := range v.([]any) {
		m, ok := x.(map[string]any)
		d, okD := m["duration"]
		r, okR := m["target"]
		if !ok || !okD || !okR || len(m) != 2 {
			return "", fmt.Errorf("stage %d: a list of stages is k6's, each {duration, target}; or write them DURATION:RATE,… (30s:100,1m:100)", i+1)
		}
		parts = append(parts, fmt.Sprintf("%v:%v", d, r))
	}
	return strings.Join(parts, ","), nil
}

// readScenarios reads the file at path: a list of scenarios under
// "scenarios:", each with its name (or, as k6 writes them, a map of
// scenarios by name, run in the file's order). It is read as YAML nodes
// to keep their lines: every error names the line it is about.
func readScenarios(path string) ([]scenarioDef, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--scenarios %q: %v", path, unwrapPath(err))
	}
	fail := func(line int, format string, a ...any) error {
		return fmt.Errorf("--scenarios %q: line %d: %s", path, line, fmt.Sprintf(format, a...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("--scenarios %q: %s", path, syntaxError(text, err))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("--scenarios %q: the file is empty", path)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "%s: the file holds a list under \"scenarios:\"", nodeKind(root))
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Value != "scenarios" {
			return nil, fail(k.Line, "field %s not found: the file holds a list under \"scenarios:\"", k.Value)
		}
		list = root.Content[i+1]
	}
	// Each scenario's node, and its name's when the map's key gives it.
	var items, keyed []*yaml.Node
	switch {
	case list == nil || list.Tag == "!!null":
	case list.Kind == yaml.SequenceNode:
		items = list.Content
	case list.Kind == yaml.MappingNode: // k6's map of scenarios by name
		for i := 0; i+1 < len(list.Content); i += 2 {
			keyed, items = append(keyed, list.Content[i]), append(items, list.Content[i+1])
		}
	default:
		return nil, fail(list.Line, "\"scenarios:\" holds %s: want a list of scenarios, each \"- name: NAME\" and its keys (or a map of them by name, as k6's)", nodeKind(list))
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("--scenarios %q: no scenario in it (a list under \"scenarios:\")", path)
	}
	var defs []scenarioDef
	for i, n := range items {
		if n.Kind != yaml.MappingNode {
			return nil, fail(n.Line, "scenario %d is %s: a scenario is a map of keys (name, rate, url, …)", i+1, nodeKind(n))
		}
		var sc map[string]any
		if err := n.Decode(&sc); err != nil {
			return nil, fmt.Errorf("--scenarios %q: %s", path, yamlError(err))
		}
		d := scenarioDef{line: n.Line, keys: map[string]int{}}
		for j := 0; j+1 < len(n.Content); j += 2 {
			d.keys[n.Content[j].Value] = n.Content[j].Line
		}
		d.name, _ = sc["name"].(string)
		if keyed != nil {
			d.line = keyed[i].Line
			if d.name != "" && d.name != keyed[i].Value {
				return nil, fail(d.keys["name"], "scenario %q has the name %q: in a map of scenarios, the key is the name", keyed[i].Value, d.name)
			}
			d.name = keyed[i].Value
		}
		switch {
		case d.name == "":
			return nil, fail(d.line, "scenario %d has no name", i+1)
		case slices.ContainsFunc(defs, func(o scenarioDef) bool { return o.name == d.name }):
			return nil, fail(d.line, "scenario %q given twice", d.name)
		case strings.ContainsAny(d.name, ":, "):
			return nil, fail(d.line, "scenario name %q: no colon, comma or space (objectives name it as NAME:…)", d.name)
		}
		if err := d.read(sc); err != nil {
			return nil, d.errorf(path, err)
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// read reads a scenario's keys sc into d.
func (d *scenarioDef) read(sc map[string]any) error {
	var url string
	for _, key := range slices.Sorted(maps.Keys(sc)) {
		v := sc[key]
		line := d.keys[key]
		as, err := k6Key(key, v, sc)
		if err != nil {
			return atKey{key, err}
		}
		key = as
		d.keys[key] = line
		switch {
		case key == "" || key == "name":
		case key == "steps":
			if d.sess.steps, err = readSteps(v); err != nil {
				return atKey{key, reLined(err)}
			}
		case key == "conversation":
			if d.sess.conv, err = readConversation(v); err != nil {
				return atKey{key, reLined(err)}
			}
		case key == "on-failure":
			d.sess.onFailure = fmt.Sprint(v)
		case key == "url":
			url = fmt.Sprint(v)
		case key == "start-after":
			s := fmt.Sprint(v)
			if d.start, err = time.ParseDuration(s); err != nil || d.start < 0 {
				return fmt.Errorf("--start-after %q: want a duration ≥ 0 such as 30s, from the run's start", s)
			}
		case key == "slo":
			for _, x := range listOf(v) {
				d.slos = append(d.slos, d.name+":"+x)
			}
		case key == "stages" && isList(v):
			st, err := k6Stages(v)
			if err != nil {
				return atKey{key, err}
			}
			d.args = append(d.args, "--stages="+st)
		case slices.Contains(notInScenario, key):
			return fmt.Errorf("--%s is the whole run's: give it on the command line", key)
		default:
			for _, x := range listOf(v) {
				d.args = append(d.args, "--"+key+"="+x)
			}
		}
	}
	if url != "" {
		d.args = append(d.args, url)
	}
	switch {
	case d.sess.onFailure != "" && !d.sess.any():
		return errors.New("on-failure without steps or a conversation")
	case d.sess.steps != nil && d.sess.conv != nil:
		return errors.New("steps and a conversation: a scenario's sessions are one or the other")
	}
	return nil
}

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

// reLined drops the lines a steps or conversation error names: they are
// of the key's value written anew (readSteps), not of the file; the
// error is at the key's line (atKey).
func reLined(err error) error {
	return errors.New(lineInText.ReplaceAllString(err.Error(), ""))
}

var lineInText = regexp.MustCompile(`line \d+: `)

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

// nodeKind says what a node holds, for an error: "a list", "a map", "a value".
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a map"
	}
	return fmt.Sprintf("the value %q", n.Value)
}

// oneLine is a YAML error in one line, each of its errors naming its
// line ("line 2: field rat not found …").
func oneLine(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// yamlError is oneLine without the library's "yaml: " prefix.
func yamlError(err error) string { return strings.TrimPrefix(oneLine(err), "yaml: ") }

// syntaxError is a YAML syntax error of text at its line. yaml.v3 names
// the line where the construct it was parsing began, counted from 0 for
// a parser's error ("yaml: line 1: did not find expected key" for a
// slip on line 4), and has no other way to say where: the line is the
// first whose prefix of the file fails with the same problem (a file
// cut after a whole line parses unless the slip is in it). Past 2,000
// lines (as many parses), the library's word stands.
func syntaxError(text []byte, err error) string {
	msg := yamlError(err)
	_, problem, ok := strings.Cut(msg, ": ")
	if !ok || !strings.HasPrefix(msg, "line ") {
		return msg
	}
	lines := bytes.SplitAfter(text, []byte("\n"))
	if len(lines) > 2000 {
		return msg
	}
	var n yaml.Node
	for k := 1; k <= len(lines); k++ {
		err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		if err == nil {
			continue
		}
		if _, p, _ := strings.Cut(yamlError(err), ": "); p == problem {
			return fmt.Sprintf("line %d: %s", k, problem)
		}
	}
	return msg
}

// scenarioSet is a run of --scenarios, checked: each scenario's run and
// options, the objectives of the whole, and the logs it writes (open
// until the run ends).
type scenarioSet struct {
	scs   []loadtest.Scenario
	opts  []*loadOptions
	names []string
	objs  []verify.Objective
	logs  []io.Closer
}

// close closes the scenarios' logs.
func (set *scenarioSet) close() {
	for _, c := range set.logs {
		c.Close()
	}
}

// buildScenarios reads and checks the scenarios of --scenarios: each
// scenario's flags are the command line's (args, --scenarios dropped)
// followed by its own, parsed and validated as a run's. runScenarios
// runs them; 'k8s run' checks them so, as shard 0/N, before it creates
// anything. Every error is the command line's (exit 2). The set is never
// nil: close it, error or not.
func buildScenarios(top *loadOptions, topFS *pflag.FlagSet, args []string) (*scenarioSet, error) {
	path := top.scenarios
	set := &scenarioSet{}
	for _, name := range []string{"rate", "stages", "arrivals", "closed", "repeats"} {
		if topFS.Changed(name) {
			return set, fmt.Errorf("--%s with --scenarios: each scenario has its own schedule; set it in the file", name)
		}
	}
	defs, err := readScenarios(path)
	if err != nil {
		return set, err
	}
	slos := slices.Clone(top.slos)
	for _, d := range defs {
		slos = append(slos, d.slos...)
	}
	objs, err := parseObjectives(slos)
	if err != nil {
		return set, err
	}
	if err := checkOutputs(output("--output", top.output), output("--log", top.logFile), output("--hlog", top.hlog)); err != nil {
		return set, err
	}
	if err := top.metrics.validate(topFS); err != nil { // one server for every scenario
		return set, err
	}
	if top.targets.file == "-" {
		return set, errors.New("--targets - with --scenarios: standard input is read once, and each scenario reads its targets: give a file")
	}
	if top.logFile == "-" {
		return set, errors.New("--log - with --scenarios: each scenario writes a log of its own; give a file name (run.csv writes run.NAME.csv)")
	}
	if top.hlog != "" {
		return set, errors.New("--hlog with --scenarios: an interval log is one schedule's; give --log, which writes one log per scenario")
	}
	base := withoutFlag(withoutFlag(args, "scenarios"), "slo") // objectives are judged on the whole, scoped or not
	scs := make([]loadtest.Scenario, len(defs))
	opts := make([]*loadOptions, len(defs))
	names := make([]string, len(defs))
	for i, d := range defs {
		name := d.name
		names[i] = name
		o := &loadOptions{}
		fs := loadFlags(o)
		a := append(slices.Clone(base), d.args...)
		if topFS.NArg() == 1 && !hasURL(d.args) {
			a = append(withoutArg(a, topFS.Arg(0)), topFS.Arg(0))
		} else {
			a = withoutArg(a, topFS.Arg(0))
		}
		if err := parseFlags(fs, a); err != nil {
			return set, d.errorf(path, err)
		}
		ownSchedule(fs, d)
		if fs.NArg() != 1 && o.targets.file == "" && d.sess.steps == nil { // steps may each have a whole URL
			return set, fmt.Errorf("--scenarios %q: line %d: scenario %q has no url: give it one (or targets), or a URL on the command line for all", path, d.line, name)
		}
		if d.sess.any() && o.grpc.on() { // a session walks HTTP requests (internal/session)
			return set, d.errorf(path, errors.New("--grpc-method with steps or a conversation: a session's steps are HTTP requests; give the calls a scenario of their own"))
		}
		o.bodies.conversation = d.sess.conv != nil                           // its turns take --extra-body
		o.targets.scope = mix.Scope{Of: uint64(len(defs)), Index: uint64(i)} // {{uid}}
		if err := o.validate(fs); err != nil {
			return set, d.errorf(path, err)
		}
		if o.metrics != top.metrics {
			return set, d.errorf(path, errors.New("--metrics-* apply to the whole run: give them on the command line"))
		}
		r := &o.run
		if d.sess.any() {
			if err := sessionRun(fs, r, d.sess, &o.bodies, o.targets.scope); err != nil {
				return set, d.errorf(path, err)
			}
		}
		if top.logFile != "" {
			logPath := scenarioPath(top.logFile, name)
			f, err := os.Create(logPath)
			if err != nil {
				return set, fmt.Errorf("--log %q: %v", logPath, unwrapPath(err))
			}
			set.logs = append(set.logs, f)
			r.Log = newLog(r, f)
		}
		scs[i], opts[i] = loadtest.Scenario{Name: name, Options: *r, StartAfter: d.start}, o
	}
	if err := checkScopes(objs, scenarioScopes(scs)); err != nil {
		return set, err
	}
	set.scs, set.opts, set.names, set.objs = scs, opts, names, objs
	return set, nil
}

// runScenarios runs --scenarios: the scenarios of buildScenarios all at
// once (loadtest.RunScenarios), the union reported, judged and written
// as one run's result.
func runScenarios(ctx context.Context, top *loadOptions, topFS *pflag.FlagSet, args []string, stdout, stderr io.Writer) int {
	set, err := buildScenarios(top, topFS, args)
	defer set.close()
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	scs, opts, names, objs := set.scs, set.opts, set.names, set.objs
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
			what := result.SendsOf(sc.Options.Method, sc.Options.URL.String(), sc.Options.Request)
			if ss := sc.Options.Sessions; ss != nil {
				what = fmt.Sprintf("sessions of %d steps (%s) at %s", len(ss.StepNames()), strings.Join(ss.StepNames(), " → "), sc.Options.URL)
			}
			from := ""
			if sc.StartAfter > 0 {
				from = " from +" + sc.StartAfter.String()
			}
			fmt.Fprintf(stderr, "openload: scenario %s: %s%s → %s\n", sc.Name, opts[i].replay.name(sc.Options.Schedule), from, what)
		}
	}
	oc, err := s.RunScenarios(ctx)
	return top.render(oc, err, exitOK, stdout, stderr) // load.go
}

// ownSchedule drops the command line's --duration from a scenario whose
// own stages or arrivals say how long it lasts: -d is for the scenarios
// without (a scenario's own duration with them is still refused).
func ownSchedule(fs *pflag.FlagSet, d scenarioDef) {
	_, own := d.keys["duration"]
	_, stages := d.keys["stages"]
	_, arrivals := d.keys["arrivals"]
	if f := fs.Lookup("duration"); f.Changed && !own && (stages || arrivals) {
		f.Value.Set(f.DefValue)
		f.Changed = false
	}
}

// sessionFlags are the flags a scenario of steps cannot take: what they
// set is each step's own.
var sessionFlags = []string{"method", "body", "body-file", "targets", "targets-format", "values", "dataset", "prompt-tokens", "output-tokens", "retries", "warmup", "closed"}

// sessionRun makes r a session run of ss's steps: relative step URLs
// are under the scenario's URL, its headers go with every step, and its
// seed draws the think times.
func sessionRun(fs *pflag.FlagSet, r *loadtest.Options, ss scenarioSessions, b *bodyOptions, scope mix.Scope) error {
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
	plan, err := session.Compile(session.Spec{Steps: ss.steps, OnFailure: ss.onFailure, Base: r.URL, Header: r.Header, Seed: r.Schedule.Seed, Scope: scope})
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
// scenario, or a step or target of one (SCENARIO:STEP:…,
// SCENARIO:TARGET:…, or the step's or target's name alone when only one
// scenario has it: verify's partOf reads them so), known once the steps
// are (a dataset's turns included).
func scenarioScopes(scs []loadtest.Scenario) []string {
	var scopes []string
	owners := map[string]int{} // a part's name → the scenarios that have it
	for _, sc := range scs {
		scopes = append(scopes, sc.Name)
		var parts []string
		if ss := sc.Options.Sessions; ss != nil {
			parts = ss.StepNames()
		}
		for _, t := range sc.Options.Targets {
			parts = append(parts, t.Name)
		}
		for _, p := range parts {
			scopes = append(scopes, sc.Name+":"+p)
			owners[p]++
		}
	}
	for _, sc := range scs {
		delete(owners, sc.Name) // a scenario's own name is the scenario
	}
	for _, p := range slices.Sorted(maps.Keys(owners)) {
		if owners[p] == 1 {
			scopes = append(scopes, p)
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
