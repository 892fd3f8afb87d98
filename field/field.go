// Package field describes a configuration value that a Validate method
// refused, in the words of the Go type that holds it: the field's Go name,
// its value, and why. A library names its own fields; a caller that knows
// them by other names (the CLI, by its flags) renders the message with
// those instead, from the error's fields rather than by rewriting its text.
//
// A configuration that holds another whole names the inner one's fields
// by their path, as Go code does: loadtest.Options' Schedule.Rate. In and
// Rename give an inner Validate's error those names, so that the outer
// Validate can return it as is.
//
// It is public because the public packages' Validate methods return it
// (model, schedule and servers/stub name it FieldError), and it imports
// nothing of openload, so that any of them can use it.
package field

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a refused configuration value.
type Error struct {
	// Field is the field's Go name, e.g. "Speed", or its path from an
	// outer configuration, e.g. "Schedule.Rate".
	Field string
	Value any // the value refused
	// format is the message with a field's name written {Name} (Field's
	// too) and its values as fmt verbs; args are the values.
	format string
	args   []any
	rename func(string) string // from the format's names to the caller's, or nil
}

// Errorf returns the error of field, whose value value was refused. format
// is the whole message: it names fields as {Name} or {Outer.Name} (field
// itself included),
// and its verbs format args as fmt.Sprintf does, e.g.
//
//	Errorf("Window", w, "{Window} must be ≥ {Bucket} (%v), got %v", b, w)
func Errorf(field string, value any, format string, args ...any) *Error {
	return &Error{Field: field, Value: value, format: format, args: args}
}

// Error is the message with the fields' Go names.
func (e *Error) Error() string { return e.Message(nil) }

// Rename returns err with the fields it names called by rename, when err
// is or wraps a *Error, and err itself otherwise. A configuration that
// builds another from its own fields (e.g. engine.Closed from
// loadtest.Options) uses it to name its own fields in the other's errors.
// The result is the *Error alone: what wrapped it is dropped.
func Rename(err error, rename func(field string) string) error {
	var fe *Error
	if !errors.As(err, &fe) {
		return err
	}
	r := *fe
	r.Field = rename(fe.Field)
	if inner := fe.rename; inner != nil {
		r.rename = func(f string) string { return rename(inner(f)) }
	} else {
		r.rename = rename
	}
	return &r
}

// In returns err with every field it names prefixed by outer and a dot,
// when err is or wraps a *Error: the error of a configuration held whole
// in outer's field, e.g. In("Retry", policy.Validate()) names Retry.Backoff.
// It returns nil for nil.
func In(outer string, err error) error {
	return Rename(err, func(f string) string { return outer + "." + f })
}

// Message is the message with name(F) for every field F it names; a nil
// name keeps the Go names (or paths).
func (e *Error) Message(name func(field string) string) string {
	var b strings.Builder
	rest := e.format
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 || !ident(rest[open+1:open+end]) {
			b.WriteString(rest[:open+1])
			rest = rest[open+1:]
			continue
		}
		f := rest[open+1 : open+end]
		if e.rename != nil {
			f = e.rename(f)
		}
		if name != nil {
			f = name(f)
		}
		b.WriteString(rest[:open])
		// The name goes in before the values are formatted: a % in it
		// must stay a %.
		b.WriteString(strings.ReplaceAll(f, "%", "%%"))
		rest = rest[open+end+1:]
	}
	b.WriteString(rest)
	return fmt.Sprintf(b.String(), e.args...)
}

// ident reports whether s is a Go identifier of ASCII letters and digits,
// or a path of them joined by dots.
func ident(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || !letter(part[0]) {
			return false
		}
		for i := range len(part) {
			if !letter(part[i]) && (part[i] < '0' || part[i] > '9') {
				return false
			}
		}
	}
	return true
}

func letter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
