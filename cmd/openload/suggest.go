package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// commandNames are openload's commands, in the order its help lists them.
var commandNames = []string{"stub", "diff", "report", "merge", "model", "sweep", "k8s", "help"}

// isCommand reports whether word is one of commandNames.
func isCommand(word string) bool { return slices.Contains(commandNames, word) }

// unknownCommand is the error for a first argument that reads as a
// mistyped command rather than a URL, and whether word reads so. A word
// reads as a command when it is letters, digits, '-' and '_' only (a URL
// holds "://", a host:port a colon, a file name most often a dot or a
// slash), is not localhost, and names no file: such a word left to the
// load run would be taken for a URL without its scheme.
func unknownCommand(word string) (error, bool) {
	if word == "" || word[0] == '-' || word == "localhost" || isCommand(word) {
		return nil, false
	}
	for _, r := range word {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return nil, false
		}
	}
	if _, err := os.Stat(word); err == nil {
		return nil, false
	}
	if near := nearest(strings.ToLower(word), commandNames); near != "" {
		return fmt.Errorf("unknown command %q: did you mean %s?", word, near), true
	}
	return fmt.Errorf("unknown command %q (commands: %s; a URL starts with http:// or https://)", word, strings.Join(commandNames, ", ")), true
}

// helpTopicError is the error of `openload help WORD` for a WORD that is
// no command.
func helpTopicError(word string) error {
	if near := nearest(strings.ToLower(word), commandNames); near != "" {
		return fmt.Errorf("help: unknown topic %q: did you mean %s?", word, near)
	}
	return fmt.Errorf("help: unknown topic %q (topics: %s)", word, strings.Join(commandNames, ", "))
}

// parseFlags parses args (longForm: one or two dashes) into fs, and turns
// pflag's errors into openload's one-liners: an unknown long flag near a
// known one suggests it, and a value that does not parse reads
// `--rate "abc": not a number`, without Go's strconv wording.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	args = longForm(fs, args)
	if err := foreignFlag(fs, args); err != nil {
		return err
	}
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if near := nearest(ne.GetSpecifiedName(), names); near != "" {
			return fmt.Errorf("%v: did you mean --%s?", err, near)
		}
		return err
	}
	var ie *pflag.InvalidValueError
	if errors.As(err, &ie) {
		return fmt.Errorf("--%s %q: %s", ie.GetFlag().Name, ie.GetValue(), valueProblem(ie))
	}
	return err
}

// foreign is a flag of another load generator: whose it is, and openload's
// flag that does its work ("" none).
type foreign struct{ tool, ours string }

// foreignFlags are the long flags of vegeta, wrk (and wrk2), k6 and hey
// that openload does not have under the same name. Without them, pflag
// reads "-max-workers=4" as the shorthand -m with the value
// "ax-workers=4" (an invalid method), "-redirects=0" as -r (a rate) and
// "-out x" as -o writing the file "ut": a user coming from one of these
// tools gets an error about another flag, or none.
var foreignFlags = map[string]foreign{
	// vegeta attack
	"max-workers": {"vegeta's", "-c"}, "workers": {"vegeta's", "-c"},
	"max-connections": {"vegeta's", "-c"}, "redirects": {"vegeta's", "--follow-redirects"},
	"format":    {"vegeta's", "--targets-format"},
	"keepalive": {"vegeta's", "none: connections are always kept alive"}, "chunked": {"vegeta's", ""},
	"cert": {"vegeta's", ""}, "key": {"vegeta's", ""}, "root-certs": {"vegeta's", ""},
	"dns-ttl": {"vegeta's", ""}, "resolvers": {"vegeta's", ""}, "laddr": {"vegeta's", ""},
	"unix-socket": {"vegeta's", ""}, "proxy-header": {"vegeta's", ""}, "session-tickets": {"vegeta's", ""},
	"connect-to": {"vegeta's", ""}, "name": {"vegeta's", ""},
	// wrk, wrk2
	"threads": {"wrk's", ""}, "script": {"wrk's", "--targets"},
	"latency": {"wrk's", "none: the report always has the percentiles"},
	// k6
	"vus": {"k6's", "--closed -c"}, "iterations": {"k6's", "-n"}, "stage": {"k6's", "--stages"},
	"rps": {"k6's", "-r"}, "max-redirects": {"k6's", "--follow-redirects"},
	"summary-export": {"k6's", "-o"}, "out": {"k6's", "--metrics-push or -o"},
	"insecure-skip-tls-verify": {"k6's", "--insecure"}, "no-connection-reuse": {"k6's", ""},
	"http-debug": {"k6's", ""}, "env": {"k6's", "--values"}, "tag": {"k6's", ""},
	// hey
	"disable-keepalive": {"hey's", ""}, "disable-redirects": {"hey's", "none: redirects are not followed unless --follow-redirects"},
	"disable-compression": {"hey's", ""}, "cpus": {"hey's", ""}, "host": {"hey's", "-H 'Host: name'"},
	"h2": {"hey's", "--http2"},
}

// foreignFlag is the error for the first of args (after longForm) that is
// one of foreignFlags and no flag of fs: "unknown flag -max-workers
// (vegeta's; openload's -c)". Flag values are skipped, as longForm skips
// them.
func foreignFlag(fs *pflag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if takesNext(fs, a) {
			i++
			continue
		}
		spelled, _, _ := strings.Cut(a, "=")
		name := strings.TrimLeft(spelled, "-")
		f, ok := foreignFlags[name]
		if !ok || len(spelled)-len(name) > 2 || name == spelled || fs.Lookup(name) != nil {
			continue
		}
		switch {
		case f.ours == "":
			return fmt.Errorf("unknown flag %s (%s; openload has none)", spelled, f.tool)
		case strings.HasPrefix(f.ours, "none: "):
			return fmt.Errorf("unknown flag %s (%s; openload has none: %s)", spelled, f.tool, strings.TrimPrefix(f.ours, "none: "))
		}
		return fmt.Errorf("unknown flag %s (%s; openload's %s)", spelled, f.tool, f.ours)
	}
	return nil
}

// valueProblem says in words why the value of ie does not parse.
func valueProblem(ie *pflag.InvalidValueError) string {
	cause := ie.Unwrap()
	var ne *strconv.NumError
	if errors.As(cause, &ne) {
		what := "a number"
		if ne.Func != "ParseFloat" {
			what = "a whole number"
		}
		switch {
		case errors.Is(ne.Err, strconv.ErrRange) && ne.Num == ie.GetValue():
			return "out of range"
		case errors.Is(ne.Err, strconv.ErrRange):
			return fmt.Sprintf("%q is out of range", ne.Num)
		case ne.Num == ie.GetValue():
			return "not " + what
		}
		return fmt.Sprintf("%q is not %s", ne.Num, what)
	}
	switch msg := cause.Error(); msg {
	case "must be a number":
		return "not a number"
	case "must be an integer":
		return "not a whole number"
	case "must be a non-negative integer":
		return "not a whole number ≥ 0"
	case `must be a duration like "30s" or "5m"`:
		return "not a duration such as 30s or 5m"
	default:
		return msg
	}
}

// nearest is the candidate nearest to word by edit distance, or "" when
// none is near enough to be a slip: one edit, or two for a candidate of
// six letters or more (a deleted, added, changed or swapped letter each
// count one).
func nearest(word string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(word, c)
		if d <= max(1, len(c)/3) && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: the
// fewest insertions, deletions, substitutions and swaps of two adjacent
// bytes that turn a into b, no substring edited twice.
//
//	d(i, j) = min(d(i−1, j) + 1, d(i, j−1) + 1, d(i−1, j−1) + [a_i ≠ b_j],
//	              d(i−2, j−2) + 1 if a_i = b_{j−1} and a_{i−1} = b_j)
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
