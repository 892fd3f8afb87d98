package main

import (
	"strings"

	"github.com/spf13/pflag"
)

// longForm rewrites Go-style single-dash long flags ("-rate 160",
// "-rate=160") to pflag's double-dash form, so that both spellings work.
//
// pflag cannot do this itself. It reads "-rate" POSIX-style, as the
// shorthand -r with the value "ate", so "-rate 160" fails, and worse,
// "-method POST" silently sets the method "ethod" and "-output r.json"
// writes to a file named "utput" (TestLongForm checks this). Its hooks do
// not reach it: SetNormalizeFunc only renames what it has already read as
// a long flag, and ParseErrorsAllowlist only ignores or passes on unknown
// flags, while -r is known.
//
// Only registered long names of two letters or more are rewritten. A
// value is never taken for a flag: takesNext asks pflag's flags which ones
// read the next argument, so "-H -rate" keeps "-rate" as the header value.
func longForm(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if name, _, _ := strings.Cut(a, "="); len(name) > 2 && name[0] == '-' && name[1] != '-' && fs.Lookup(name[1:]) != nil {
			a = "-" + a
		}
		out = append(out, a)
		if takesNext(fs, a) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// takesNext reports whether pflag reads the argument after a as a flag's
// value: a is a flag that takes a value (NoOptDefVal empty, unlike a bool)
// and does not carry one ("--rate=160", "-c4").
func takesNext(fs *pflag.FlagSet, a string) bool {
	if name, ok := strings.CutPrefix(a, "--"); ok {
		name, _, hasValue := strings.Cut(name, "=")
		f := fs.Lookup(name)
		return f != nil && f.NoOptDefVal == "" && !hasValue
	}
	// A cluster of shorthands such as "-qc": pflag reads letters until one
	// takes a value, which is the rest of the cluster or the next argument.
	for j := 1; j < len(a) && a[0] == '-'; j++ {
		f := fs.ShorthandLookup(a[j : j+1])
		if f == nil { // unknown, or "=": pflag reads no further argument
			return false
		}
		if f.NoOptDefVal == "" {
			return j == len(a)-1
		}
	}
	return false
}
