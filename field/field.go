// Package field describes a configuration value that a Validate method
// refused, in the words of the Go type that holds it: the field's Go name,
// its value, and why. A library names its own fields; a caller that knows
// them by other names (the CLI, by its flags) renders the message with
// those instead, from the error's fields rather than by rewriting its text.
//
// It is public because the public packages' Validate methods return it
// (model, schedule and targets/stub name it FieldError), and it imports
// nothing of openload, so that any of them can use it.
package field

import (
	"fmt"
	"strings"
)

// Error is a refused configuration value.
type Error struct {
	Field string // the field's Go name, e.g. "Speed"
	Value any    // the value refused
	// format is the message with a field's name written {Name} (Field's
	// too) and its values as fmt verbs; args are the values.
	format string
	args   []any
}

// Errorf returns the error of field, whose value value was refused. format
// is the whole message: it names fields as {Name} (field itself included),
// and its verbs format args as fmt.Sprintf does, e.g.
//
//	Errorf("Window", w, "{Window} must be ≥ {Bucket} (%v), got %v", b, w)
func Errorf(field string, value any, format string, args ...any) *Error {
	return &Error{Field: field, Value: value, format: format, args: args}
}

// Error is the message with the fields' Go names.
func (e *Error) Error() string { return e.Message(nil) }

// Message is the message with name(F) for every field F it names; a nil
// name keeps the Go names.
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

// ident reports whether s is a Go identifier of ASCII letters and digits.
func ident(s string) bool {
	if s == "" || !letter(s[0]) {
		return false
	}
	for i := range len(s) {
		if !letter(s[i]) && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

func letter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
