package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/mix"
)

// targetsOptions make a run's request mix: vegeta's targets file read
// unchanged (--targets), taken in turn as vegeta takes them or drawn by
// weight, and per-request values ({{seq}}, {{rand A B}}, {{csv.COL}}
// from --values) in URLs, headers and bodies. internal/mix reads and
// builds them; this file only reads the flags.
type targetsOptions struct {
	file   string
	format string
	values string
	lazy   bool      // --lazy: read file as the run sends (readLazily)
	scope  mix.Scope // a scenario's place in its run, for {{uid}} (scenarios.go)
	stdin  io.Reader // what --targets - reads; nil: the package's stdin
}

func (t *targetsOptions) flags(fs *pflag.FlagSet, b fieldBinding) {
	fs.StringVar(&t.file, b.bind("targets", "Targets", "TargetWeights"), "", "send the targets of this vegeta targets `file` ('-': standard input; its HTTP format or JSON lines), in turn, or drawn by their weights ('# openload: name=N weight=W' or JSON \"name\", \"weight\")")
	fs.BoolVar(&t.lazy, b.bind("lazy", "TargetStream"), false, "read --targets as the run sends (vegeta's -lazy): request i goes to the i-th target read, a generator piped in starts the run at once, the run stops when they end")
	fs.StringVar(&t.format, "targets-format", "auto", "the --targets file's format: http, json, or auto (JSON when its first line starts with '{')")
	fs.StringVar(&t.values, "values", "", "a CSV `file` (a header row names the columns) whose row seq mod rows fills {{csv.COLUMN}} in URLs, headers and bodies")
}

// validate builds o.run's mix, from --targets, or from the URL, -H and
// the body when they hold a {{…}} value; it runs after o.request and the
// URL is parsed.
func (t *targetsOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	r := &o.run
	if fs.Changed("targets-format") && t.file == "" {
		return errors.New("--targets-format applies to a --targets file")
	}
	if t.lazy && t.file == "" {
		return errors.New("--lazy reads a --targets file as the run sends: give --targets (- for standard input)")
	}
	var vals *mix.Values
	if t.values != "" {
		var err error
		if vals, err = mix.ReadValuesFile(t.values); err != nil {
			return fileFlagError("--values", t.values, err)
		}
	}
	var ts []mix.Target
	switch {
	case t.file != "":
		switch {
		case fs.NArg() == 1:
			return fmt.Errorf("--targets names every URL: drop the URL %s", fs.Arg(0))
		case o.body != "" || o.bodyFile != "" || o.prompts.made():
			return errors.New("--targets gives each target its body: drop --body, --body-file, --prompt-tokens and --dataset")
		case fs.Changed("method"):
			return errors.New("--targets gives each target its method: drop -m")
		}
		var format mix.Format
		switch t.format {
		case "auto":
		case "http":
			format = mix.HTTP
		case "json":
			format = mix.JSON
		default:
			return fmt.Errorf("--targets-format %q: want http, json or auto", t.format)
		}
		if t.lazy {
			return t.readLazily(o, format, vals)
		}
		var err error
		if t.file == "-" {
			in := t.stdin
			if in == nil {
				in = stdin
			}
			ts, err = mix.ReadTargets(in, "standard input", mix.Options{Format: format})
		} else {
			ts, err = mix.ReadTargetsFile(t.file, mix.Options{Format: format})
		}
		if err != nil {
			return fileFlagError("--targets", t.file, err)
		}
		// -H applies to every target, as vegeta's -header does, unless
		// the target sets the header itself.
		for i := range ts {
			mix.AddHeader(&ts[i], r.Header)
		}
	case r.URL != nil && (templated(fs.Arg(0)) || templated(string(r.Body)) || templatedHeader(r.Header)):
		// The URL as typed: url.URL.String would escape the braces of a
		// path.
		if len(r.Bodies) > 0 {
			return errors.New("{{…}} values with a .jsonl --body-file or generated prompts: put the values in a --targets file")
		}
		raw := fs.Arg(0)
		ts = []mix.Target{{Name: r.Method + " " + raw, Method: r.Method, URL: raw, Header: r.Header, Body: r.Body, File: "the command line", Line: 1}}
	case t.values != "":
		return errors.New("--values fills {{csv.COLUMN}} values: none is in the URL, the headers, the body or a --targets file")
	default:
		return nil
	}
	targets, weights, err := mix.BuildIn(ts, vals, r.Schedule.Seed, t.scope)
	if err != nil {
		return err
	}
	r.Targets, r.TargetWeights, r.TargetSeed = targets, weights, r.Schedule.Seed
	from := t.file
	if from == "-" {
		from = "standard input"
	}
	what := fmt.Sprintf("%d targets from %s, in turn", len(targets), from)
	switch {
	case t.file == "":
		what = "values per request in the URL, headers or body"
	case weights != nil:
		what = fmt.Sprintf("%d targets from %s, drawn by weight (%s) with seed %d", len(targets), from, weightText(weights), r.Schedule.Seed)
	}
	if vals != nil {
		what += fmt.Sprintf(", {{csv.…}} from %s (%d rows)", t.values, vals.Rows())
	}
	note(r).Targets = what
	if len(targets) > 1 {
		note(r).TargetMethods = map[string]int{}
		for _, t := range targets {
			note(r).TargetMethods[t.Method]++
		}
	}
	first := targets[0]
	r.URL, r.Method, r.Header, r.Body = first.URL, first.Method, first.Header, first.Body
	return nil
}

// stdin is what --targets - reads: a variable, for tests.
var stdin io.Reader = os.Stdin

// readLazily makes o.run's mix a stream of the targets of t.file, read
// as the run sends (--lazy, mix.ReadStream), once its first target is
// read: the run's origin is that target's, and a generator piped in
// starts the run at its first target. It is asked for, as vegeta's
// -lazy is, not taken for every pipe: `echo "GET …" | openload --targets
// -` sends that one target for the whole run, as vegeta without -lazy
// does, where a lazy read would stop at its end.
//
// What needs every target before the run, or reads them more than
// once, is refused: a shard picks request seq's target from seq, repeats
// and a sweep run the targets again, each scenario reads its own, and a
// closed loop's users take no stream.
func (t *targetsOptions) readLazily(o *loadOptions, format mix.Format, vals *mix.Values) error {
	r := &o.run
	from := t.file
	if from == "-" {
		from = "standard input"
	}
	refuse := func(why string) error {
		return fmt.Errorf("--lazy: %s; drop --lazy", why)
	}
	switch {
	case r.Shard.Of > 1:
		return refuse("each shard of --shard picks request i's target from i, which needs every target before the run")
	case o.stages.repeats > 1:
		return refuse("--repeats sends the targets again in each run")
	case o.plan != nil:
		return refuse("a sweep sends the targets again at each rate")
	case t.scope != mix.Scope{}:
		return refuse("each scenario reads its own targets")
	case r.Closed:
		return refuse("--closed sends its targets from a table, not as they are read")
	}
	in := t.stdin
	if in == nil {
		in = stdin
	}
	if t.file != "-" {
		f, err := os.Open(t.file) // kept open: the run reads it
		if err != nil {
			return fileFlagError("--targets", t.file, err)
		}
		in = f
	}
	s, err := mix.ReadStream(in, from, mix.StreamOptions{Options: mix.Options{Format: format}, Values: vals,
		Seed: r.Schedule.Seed, Scope: t.scope, Header: r.Header})
	if err != nil {
		return fileFlagError("--targets", t.file, err)
	}
	r.TargetStream = s
	what := fmt.Sprintf("targets from %s, read as the run sends (vegeta's -lazy), in turn", from)
	if vals != nil {
		what += fmt.Sprintf(", {{csv.…}} from %s (%d rows)", t.values, vals.Rows())
	}
	note(r).Targets = what
	first := s.First()
	r.URL, r.Method, r.Header, r.Body = first.URL, first.Method, first.Header, first.Body
	return nil
}

// fileFlagError is the error of a file a flag names that cannot be read:
// "--targets "nosuch.http": no such file or directory". An error from
// within the file names it and its line already.
func fileFlagError(flag, path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %q: %v", flag, path, pe.Err)
	}
	return fmt.Errorf("%s: %v", flag, err)
}

func templated(s string) bool { return strings.Contains(s, "{{") }

func templatedHeader(h http.Header) bool {
	for _, vs := range h {
		for _, v := range vs {
			if templated(v) {
				return true
			}
		}
	}
	return false
}

// weightText is "1:2:1".
func weightText(ws []float64) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = strconv.FormatFloat(w, 'g', -1, 64)
	}
	return strings.Join(parts, ":")
}
