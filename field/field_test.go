package field

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestMessage(t *testing.T) {
	flags := func(f string) string { return "--" + strings.ToLower(f) }
	for _, c := range []struct {
		err        *Error
		goName, as string
	}{
		{Errorf("Speed", 0.0, "{Speed} must be a finite number > 0, got %v", 0.0),
			"Speed must be a finite number > 0, got 0", "--speed must be a finite number > 0, got 0"},
		{Errorf("Window", 1, "{Window} must be >= {Bucket} (%v), got %v", 2, 1),
			"Window must be >= Bucket (2), got 1", "--window must be >= --bucket (2), got 1"},
		{Errorf("Rate", 5, "{Rate}×window×({Retries}+1) %d is too large", 5),
			"Rate×window×(Retries+1) 5 is too large", "--rate×window×(--retries+1) 5 is too large"},
		// A value is formatted after the names went in: braces and verbs
		// in it stay as they are.
		{Errorf("Policy", "{Workers}%d", "{Policy} %q is unknown", "{Workers}%d"),
			`Policy "{Workers}%d" is unknown`, `--policy "{Workers}%d" is unknown`},
		// Braces that do not hold an identifier are text.
		{Errorf("Limit", 1, "{Limit} in {1, 2} or { x}, got %d {", 1),
			"Limit in {1, 2} or { x}, got 1 {", "--limit in {1, 2} or { x}, got 1 {"},
	} {
		if got := c.err.Error(); got != c.goName {
			t.Errorf("Error() = %q, want %q", got, c.goName)
		}
		if got := c.err.Message(flags); got != c.as {
			t.Errorf("Message(flags) = %q, want %q", got, c.as)
		}
	}
	// A name with a % in it is not a verb.
	if got := Errorf("Share", 2, "{Share} must be ≤ 1, got %v", 2).Message(func(string) string { return "share%" }); got != "share% must be ≤ 1, got 2" {
		t.Errorf("Message = %q", got)
	}
}

func TestAs(t *testing.T) {
	err := fmt.Errorf("engine: retry: %w", Errorf("Backoff", -1, "{Backoff} must be ≥ 0, got %v", -1))
	var fe *Error
	if !errors.As(err, &fe) || fe.Field != "Backoff" || fe.Value != -1 {
		t.Fatalf("errors.As(%v) = %+v", err, fe)
	}
}

// An inner configuration's error, held by an outer one, names the inner
// fields by their path, and a renamed one by the outer names; a caller's
// names then apply to those.
func TestInRename(t *testing.T) {
	inner := Errorf("Window", 1, "{Window} must be >= {Bucket} (%v), got %v", 2, 1)
	err := In("Limit", fmt.Errorf("wrapped: %w", inner))
	var fe *Error
	if !errors.As(err, &fe) || fe.Field != "Limit.Window" || fe.Value != 1 {
		t.Fatalf("In: %+v", fe)
	}
	if got, want := err.Error(), "Limit.Window must be >= Limit.Bucket (2), got 1"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flags := map[string]string{"Limit.Window": "--window", "Limit.Bucket": "--bucket", "Runs": "--runs"}
	if got, want := fe.Message(func(f string) string { return flags[f] }), "--window must be >= --bucket (2), got 1"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	// Renamed, then held: both apply, the inner first.
	users := Errorf("Users", 0, "{Users} must be > 0, got %d", 0)
	err = In("Run", Rename(users, func(f string) string { return map[string]string{"Users": "Connections"}[f] }))
	if !errors.As(err, &fe) || fe.Field != "Run.Connections" || err.Error() != "Run.Connections must be > 0, got 0" {
		t.Errorf("In(Rename) = %v (%+v)", err, fe)
	}
	// A path written in a format is a name too.
	if got := Errorf("Schedule.Kind", "x", "{Closed} with {Schedule.Kind} %q", "x").Message(func(f string) string { return "<" + f + ">" }); got != `<Closed> with <Schedule.Kind> "x"` {
		t.Errorf("path in format: %q", got)
	}
	// Not a field error: as it is; nil stays nil.
	plain := errors.New("plain")
	if In("X", plain) != plain || In("X", nil) != nil || Rename(nil, strings.ToLower) != nil {
		t.Error("In or Rename changed an error that is not a *Error")
	}
	// The original is unchanged.
	if inner.Error() != "Window must be >= Bucket (2), got 1" || users.Field != "Users" {
		t.Errorf("the inner error changed: %v, %v", inner, users)
	}
}
