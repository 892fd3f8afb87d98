package main

import (
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// helpWidth is the widest line of every help text, in characters.
const helpWidth = 100

// groupKey is the pflag.Flag.Annotations key that files a flag under the
// title of its group in the help.
const groupKey = "openload/group"

// The flag groups of a load run, in the order the help gives them.
const (
	groupLoad    = "Load shape"
	groupRequest = "Request"
	groupOutput  = "Output"
	groupChecks  = "Checks and objectives"
	groupClient  = "Client and protocol"
	groupRetries = "Retries"
	groupExpect  = "Model expectations"
	// groupFlags is the one group of a command with few flags.
	groupFlags = "Flags"
	// groupEnd is the untitled group at the end of every command's flags:
	// -h, --help.
	groupEnd = ""
)

// loadGroups are the groups of loadFlags, in help order.
var loadGroups = []string{groupLoad, groupRequest, groupOutput, groupChecks, groupClient, groupRetries, groupExpect, groupEnd}

// newFlagSet returns the empty flag set of the command name. Its flags stay
// in the order registered (inGroup and flagHelp rely on it), and Parse
// returns its errors rather than printing them: the command prints one
// line (usageErrorIn).
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	return fs
}

// helpFlag registers -h, --help, last in every command's help.
func helpFlag(fs *pflag.FlagSet, help *bool) {
	inGroup(fs, groupEnd, func() { fs.BoolVarP(help, "help", "h", false, "show this help") })
}

// inGroup runs register and files the flags it registered under title,
// but for those a nested inGroup filed already. fs must not sort its flags
// (SortFlags false): registration order tells which flags are new.
func inGroup(fs *pflag.FlagSet, title string, register func()) {
	before := 0
	fs.VisitAll(func(*pflag.Flag) { before++ })
	register()
	i := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if _, filed := f.Annotations[groupKey]; i >= before && !filed {
			_ = fs.SetAnnotation(f.Name, groupKey, []string{title})
		}
		i++
	})
}

// setGroup files the named flags under title, for flags registered by a
// library (stub.Config.AddFlags) that knows nothing of the help. A name
// that is not registered panics: the table is wrong.
func setGroup(fs *pflag.FlagSet, title string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, groupKey, []string{title}); err != nil {
			panic(err)
		}
	}
}

// groupOf is the title of f's group, and whether it has exactly one.
func groupOf(f *pflag.Flag) (string, bool) {
	g := f.Annotations[groupKey]
	if len(g) != 1 {
		return "", false
	}
	return g[0], true
}

// flagHelp is the help of fs's visible flags, group by group in the order
// of titles (each group's flags in the order they were registered), under
// the group's title, wrapped to helpWidth.
//
// pflag's FlagUsagesWrapped does the rest: the "-r, --rate float" column,
// aligned over all groups, the defaults, and the wrapping. It knows no
// groups, so the flags are rendered once, in group order, and the title
// goes before each group's first entry. And it shows every bool flag as
// "--quiet[=true|false]"; its own BoolFunc flags it shows plainly, so the
// copy rendered has a bool as a BoolFunc (never parsed: it is for the
// help only).
func flagHelp(fs *pflag.FlagSet, titles []string) string {
	show := newFlagSet(fs.Name())
	counts := make([]int, len(titles))
	for i, title := range titles {
		fs.VisitAll(func(f *pflag.Flag) {
			if g, _ := groupOf(f); g != title || f.Hidden {
				return
			}
			counts[i]++
			if f.Value.Type() == "bool" {
				usage := f.Usage
				if f.DefValue != "false" {
					usage += " (default " + f.DefValue + ")"
				}
				show.BoolFuncP(f.Name, f.Shorthand, usage, nil)
				return
			}
			c := *f
			show.AddFlag(&c)
		})
	}
	lines := strings.SplitAfter(show.FlagUsagesWrapped(helpWidth), "\n")
	var b strings.Builder
	group, left := -1, 0 // the group being written, and its entries still to come
	for _, l := range lines {
		// An entry starts "  -r, --rate" or "      --arrival"; the lines
		// it wraps onto are indented past the flag column.
		if trimmed := strings.TrimLeft(l, " "); strings.HasPrefix(trimmed, "-") && len(l)-len(trimmed) <= 6 {
			for left == 0 {
				group++
				left = counts[group]
				if left > 0 {
					if b.Len() > 0 {
						b.WriteString("\n")
					}
					if titles[group] != "" {
						b.WriteString(titles[group] + ":\n")
					}
				}
			}
			left--
		}
		b.WriteString(l)
	}
	return b.String()
}

// usageText is the help of a load run: `openload --help` and `openload help`.
func usageText() string {
	var o loadOptions
	return loadUsage + flagHelp(loadFlags(&o), loadGroups) + "\n" + exitCodesText
}

const loadUsage = `openload — open-model HTTP load generator: requests leave on schedule whether or not
earlier ones have returned, and latency is measured from the schedule

Usage:
  openload [flags] [URL]         run a load test; no URL: against a built-in stub model server
  openload COMMAND [flags] ...   stub, diff, report, merge, model, sweep, k8s; 'openload
                                 COMMAND --help' for each
  openload --version             the version, and the commit it was built from; no
                                 arguments: this help

Examples:
  # 160 requests/s for 10 s against the built-in stub: no URL, nothing to set up
  openload -rate 160

  # your own service for 30 s; exit 4 if p99 response time is over 200 ms
  openload -rate 500 -d 30s --slo 'response.p99<=200ms' http://127.0.0.1:8080/predict

  # Poisson arrivals; keep the result and a per-request log, then read the result again
  openload -rate 300 --arrival poisson -o run.json --log run.csv http://127.0.0.1:8080/predict
  openload report run.json

  # replay the arrivals that log recorded, twice as fast
  openload --arrivals run.csv --speed 2 http://127.0.0.1:8080/predict

Commands:
  stub     run the stub model server ('openload stub --help' says what it serves)
  diff     service vs response time of one result, or two results side by side
  report   re-render a saved result or sweep: table, json, csv, hgrm, or an HTML page and charts
  merge    add the results of the shards of one schedule (--shard) into one result
  model    predict a sharded rate limiter's 429s under Poisson arrivals, no traffic sent
  sweep    one run per offered rate, and where latency turns; or a search for the highest
           rate that meets --slo objectives ('openload sweep --help')
  k8s      the shards as a Kubernetes Indexed Job, from start to merged result ('openload k8s
           run'), or the Job's YAML ('openload k8s manifest')
  help     this text ('openload help COMMAND' is 'openload COMMAND --help')

Long flags take one or two dashes: -rate 160 and --rate 160 are the same.

`

// exitCodesText ends the help of a load run.
const exitCodesText = `Exit codes:
  0    the run is valid: its checks passed, perhaps with warnings
  1    a check failed: the measurement is not valid
  2    bad input: nothing was started
  3    the run could not be started, or its results not written
  4    an --slo objective was breached, or had no data (no sample of its figure)
  5    the target failed: over 1 % of the requests got no answer (errors, timeouts,
       unfinished; the default objective errors<=1%, which your own --slo on errors replaces),
       or were refused with a 4xx other than 408 and 429 (the default client_errors<=1%)
  130  interrupted (the results are still written)
  When several apply, the first of 3, 130, 1, 5, 4 is the exit code.
`
