package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/limitmath"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// helpCommands are the command lines that print a help, by golden file.
var helpCommands = []struct {
	golden string
	args   []string
}{
	{"help-openload.golden", []string{"--help"}},
	{"help-stub.golden", []string{"stub", "--help"}},
	{"help-diff.golden", []string{"diff", "--help"}},
	{"help-report.golden", []string{"report", "--help"}},
	{"help-model.golden", []string{"model", "poisson", "--help"}},
	{"help-merge.golden", []string{"merge", "--help"}},
	{"help-sweep.golden", []string{"sweep", "--help"}},
	{"help-k8s.golden", []string{"k8s", "--help"}},
}

// TestHelpGolden: every help is as its golden file has it, exits 0, fits
// in helpWidth columns and shows booleans plainly.
func TestHelpGolden(t *testing.T) {
	for _, c := range helpCommands {
		code, stdout, stderr := runCLI(c.args...)
		if code != exitOK || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, stderr)
		}
		for i, l := range strings.Split(stdout, "\n") {
			if n := utf8.RuneCountInString(l); n > helpWidth {
				t.Errorf("%q line %d is %d columns, more than %d:\n%s", c.args, i+1, n, helpWidth, l)
			}
			if l != strings.TrimRight(l, " ") {
				t.Errorf("%q line %d ends in spaces: %q", c.args, i+1, l)
			}
		}
		if strings.Contains(stdout, "[=") {
			t.Errorf("%q shows a flag's optional value, [=…]:\n%s", c.args, stdout)
		}
		if !strings.Contains(stdout, "\n  -h, --help ") {
			t.Errorf("%q lacks -h, --help", c.args)
		}
		golden.Check(t, c.golden, stdout)
	}
	// The other spellings print the same.
	same := map[string][][]string{
		"--help":                        {{"-h"}, {"-help"}, {"help"}, {"-rate", "5", "--help"}},
		"stub --help":                   {{"stub", "-h"}, {"stub", "-help"}, {"help", "stub"}},
		"report --help":                 {{"report", "-h"}, {"help", "report"}},
		"model poisson --help":          {{"model", "--help"}, {"model", "help"}, {"help", "model"}, {"model", "poisson", "-help"}},
		"diff --help":                   {{"diff", "-help"}, {"help", "diff"}},
		"sweep --help":                  {{"sweep", "-h"}, {"help", "sweep"}, {"sweep", "-help"}},
		"model poisson --rate 1 --help": {{"help", "model", "poisson"}},
		"k8s --help":                    {{"k8s", "-h"}, {"help", "k8s"}, {"k8s", "run", "--help"}, {"k8s", "manifest", "-h"}},
	}
	for want, alts := range same {
		_, w, _ := runCLI(strings.Fields(want)...)
		for _, alt := range alts {
			if code, got, _ := runCLI(alt...); code != exitOK || got != w {
				t.Errorf("%q: exit %d, and the help differs from %q's", alt, code, want)
			}
		}
	}
}

// commands are every command's options and the flag sets that fill them.
type commands struct {
	lo          loadOptions
	cfg         stub.Config
	stubMetrics string // openload stub --metrics-addr
	help, child bool
	do          diffOptions
	ro          reportOptions
	mo          mergeOptions
	in          limitmath.PoissonInput
	swl         loadOptions             // the load run's flags of a sweep
	so          sweepOptions            // the sweep's own
	kl          loadOptions             // the load run's flags of 'k8s run'
	ko          k8sOptions              // the cluster's
	sets        map[string]commandFlags // by command line: "openload", "openload stub", …
}

// commandFlags are a command's flag set and its groups in help order.
type commandFlags struct {
	fs     *pflag.FlagSet
	groups []string
}

func newCommands() *commands {
	c := &commands{cfg: stub.DefaultConfig()}
	c.sets = map[string]commandFlags{
		"openload":               {loadFlags(&c.lo), loadGroups},
		"openload stub":          {stubFlags(&c.cfg, &c.help, &c.child, &c.stubMetrics), stubGroups},
		"openload diff":          {diffFlags(&c.do), diffGroups},
		"openload report":        {reportFlags(&c.ro), reportGroups},
		"openload model poisson": {modelFlags(&c.in, &c.help, fieldBinding{}), modelGroups},
		"openload merge":         {mergeFlags(&c.mo), mergeGroups},
		"openload sweep":         {sweepFlags(&c.swl, &c.so), sweepGroups},
		"openload k8s":           {k8sFlags(&c.kl, &c.ko), k8sGroups},
	}
	return c
}

// TestFlagGroups: every flag of every command is filed in exactly one of
// its command's groups (a flag registered outside inGroup or setGroup
// fails here), every group holds a flag, and the help shows every visible
// flag once, under its group's title.
func TestFlagGroups(t *testing.T) {
	for cmd, c := range newCommands().sets {
		used := map[string]int{}
		c.fs.VisitAll(func(f *pflag.Flag) {
			g, ok := groupOf(f)
			if !ok || !slices.Contains(c.groups, g) {
				t.Errorf("%s: flag --%s is in no group of %q (groups %q): file it in one with inGroup or setGroup",
					cmd, f.Name, c.groups, f.Annotations[groupKey])
				return
			}
			used[g]++
		})
		for _, g := range c.groups {
			if used[g] == 0 {
				t.Errorf("%s: group %q holds no flag", cmd, g)
			}
		}
		help := flagHelp(c.fs, c.groups)
		c.fs.VisitAll(func(f *pflag.Flag) {
			entry := "      --" + f.Name + " "
			if f.Shorthand != "" {
				entry = "  -" + f.Shorthand + ", --" + f.Name + " "
			}
			n := strings.Count(help, "\n"+entry)
			if strings.HasPrefix(help, entry) {
				n++
			}
			switch {
			case f.Hidden && n != 0:
				t.Errorf("%s: hidden flag --%s is in the help", cmd, f.Name)
			case !f.Hidden && n != 1:
				t.Errorf("%s: flag --%s is in the help %d times", cmd, f.Name, n)
			case !f.Hidden:
				// The nearest title above the flag is its group's.
				g, _ := groupOf(f)
				above := help[:strings.Index(help, entry)]
				title := ""
				for _, l := range strings.Split(above, "\n") {
					if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
						title = strings.TrimSuffix(l, ":")
					}
				}
				if g != groupEnd && title != g {
					t.Errorf("%s: --%s shown under %q, filed under %q", cmd, f.Name, title, g)
				}
			}
		})
	}
}

// TestHelpExamples: every example command line in every help parses, and
// those of a load run pass validation, so the help shows commands that
// work. The files they name exist in the working directory.
func TestHelpExamples(t *testing.T) {
	t.Chdir(t.TempDir())
	for name, text := range map[string]string{"run.csv": "scheduled_ms,status\n0.000,200\n5.000,200\n", "req.json": "{}"} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, c := range helpCommands {
		_, stdout, _ := runCLI(c.args...)
		for _, line := range examples(stdout) {
			n++
			args := shellWords(t, line)
			if err := checkExample(args); err != nil {
				t.Errorf("openload %s --help: example %q: %v", strings.Join(c.args[:len(c.args)-1], " "), line, err)
			}
		}
	}
	if n < 15 {
		t.Errorf("found %d examples in the helps, want at least 15: is the Examples section still found?", n)
	}
}

// examples are the command lines of a help's Examples section, with their
// continuation lines joined, their comments and redirections dropped.
func examples(help string) []string {
	_, sec, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		return nil
	}
	var out []string
	cont := false
	for _, l := range strings.Split(sec, "\n") {
		if l != "" && l[0] != ' ' { // the next section's title ends it
			break
		}
		l = strings.TrimSpace(l)
		if i := strings.Index(l, " #"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if i := strings.Index(l, " > "); i >= 0 {
			l = l[:i]
		}
		joined := strings.TrimSuffix(l, `\`)
		switch {
		case cont:
			out[len(out)-1] += " " + strings.TrimSpace(joined)
		case strings.HasPrefix(l, "openload "):
			out = append(out, strings.TrimSpace(joined))
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return out
}

// shellWords splits a command line as a shell would, for the quoting the
// examples use: words, and single-quoted strings.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			in, quoted = !in, true
		case r == ' ' && !in:
			if w.Len() > 0 || quoted {
				words = append(words, w.String())
			}
			w.Reset()
			quoted = false
		default:
			w.WriteRune(r)
		}
	}
	if in {
		t.Fatalf("%q: unbalanced quote", line)
	}
	if w.Len() > 0 || quoted {
		words = append(words, w.String())
	}
	return words[1:] // drop "openload"
}

// checkExample parses args as the command they name would, and validates
// a load run's and the stub's flags as they would, without starting
// anything.
func checkExample(args []string) error {
	cmd := ""
	if len(args) > 0 {
		switch args[0] {
		case "stub", "diff", "report", "merge", "sweep":
			cmd, args = args[0], args[1:]
		case "model":
			if len(args) < 2 || args[1] != "poisson" {
				return fmt.Errorf("model %q", args[1:])
			}
			cmd, args = "model poisson", args[2:]
		case "k8s":
			if len(args) < 2 || (args[1] != "run" && args[1] != "manifest") {
				return fmt.Errorf("k8s %q", args[1:])
			}
			c := newCommands()
			fs := c.sets["openload k8s"].fs
			if err := parseFlags(fs, args[2:]); err != nil {
				return err
			}
			_, err := c.ko.plan(fs, args[2:], args[1], time.Now())
			return err
		}
	}
	c := newCommands()
	fs := c.sets[strings.TrimSpace("openload "+cmd)].fs
	if err := fs.Parse(longForm(fs, args)); err != nil {
		return err
	}
	switch cmd {
	case "":
		if fs.NArg() > 1 {
			return fmt.Errorf("%d arguments", fs.NArg())
		}
		return c.lo.validate(fs) // the URL and the protocol too
	case "stub":
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected %q", fs.Args())
		}
		return c.cfg.Validate()
	case "model poisson":
		_, err := limitmath.Predict(c.in)
		return err
	case "diff":
		if fs.NArg() < 1 || fs.NArg() > 2 {
			return fmt.Errorf("%d files", fs.NArg())
		}
	case "report":
		if fs.NArg() != 1 {
			return fmt.Errorf("%d files", fs.NArg())
		}
	case "merge":
		if fs.NArg() < 1 {
			return fmt.Errorf("%d files", fs.NArg())
		}
	case "sweep":
		if fs.NArg() > 1 {
			return fmt.Errorf("%d arguments", fs.NArg())
		}
		_, err := c.so.check(fs, &c.swl)
		return err
	}
	return nil
}

// TestHelpProcesses: the help of a load run names every arrival process
// of schedule's table, the drawn ones under --seed, and each parameter
// under a flag of its own that fieldFlags binds to its field, so a new
// row shows in the help (and the golden files) with no edit here.
func TestHelpProcesses(t *testing.T) {
	var o loadOptions
	fs := loadFlags(&o)
	arrival, seed := fs.Lookup("arrival").Usage, fs.Lookup("seed").Usage
	for _, p := range schedule.Processes() {
		if !strings.Contains(arrival, p.Name) {
			t.Errorf("--arrival's help %q does not name %s", arrival, p.Name)
		}
		if !p.Exact() && !strings.Contains(seed, p.Name) {
			t.Errorf("--seed's help %q does not name %s, drawn from it", seed, p.Name)
		}
		for _, pa := range p.Params {
			f := fs.Lookup(fieldFlags[loadFields]["Schedule."+pa.Field])
			if f == nil || !strings.Contains(f.Usage, pa.Help) || !strings.Contains(f.Usage, p.Name) {
				t.Errorf("%s's parameter %s: flag %+v", p.Name, pa.Field, f)
			}
		}
	}
	for in, want := range map[string]string{"": "", "a": "a", "a b": "a or b", "a b c": "a, b or c"} {
		if got := joinWords(strings.Fields(in), "or"); got != want {
			t.Errorf("joinWords(%q) = %q, want %q", in, got, want)
		}
	}
}
