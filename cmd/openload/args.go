package main

import (
	"strings"

	"github.com/spf13/pflag"
)

// longForm rewrites Go-style single-dash long flags ("-rate 160",
// "-rate=160") to pflag's double-dash form, so that both spellings work.
// Only names of registered long flags longer than one letter are rewritten;
// shorthands ("-r 160", "-c1") and flag values are left alone. Values are
// skipped by knowing which flags take one, so "-H -rate" keeps "-rate" as
// the header value it is.
func longForm(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	takesValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			out = append(out, a)
			if !hasValue && takesValue(fs.Lookup(name)) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case len(a) > 2 && a[0] == '-':
			name, _, hasValue := strings.Cut(a[1:], "=")
			if f := fs.Lookup(name); f != nil && len(name) > 1 {
				out = append(out, "-"+a)
				if !hasValue && takesValue(f) && i+1 < len(args) {
					i++
					out = append(out, args[i])
				}
				continue
			}
			out = append(out, a) // shorthand with attached value, or unknown
		case len(a) == 2 && a[0] == '-':
			out = append(out, a)
			if takesValue(fs.ShorthandLookup(a[1:])) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		default:
			out = append(out, a)
		}
	}
	return out
}
