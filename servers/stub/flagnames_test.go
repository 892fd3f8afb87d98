package stub

import (
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// fieldAddrs maps the address of every field of the struct v points to
// to the field's name, an embedded struct's fields by their promoted
// names.
func fieldAddrs(v reflect.Value, out map[uintptr]string) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			fieldAddrs(v.Field(i), out)
			continue
		}
		out[v.Field(i).Addr().Pointer()] = f.Name
	}
}

// TestFlagNames: FlagNames binds every flag AddFlags registers, and each
// to the very field the flag sets (the variable the flag writes is that
// field), so the table a caller renders errors by is the flags'.
func TestFlagNames(t *testing.T) {
	var cfg Config
	fs := pflag.NewFlagSet("stub", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	addrs := map[uintptr]string{}
	fieldAddrs(reflect.ValueOf(&cfg).Elem(), addrs)
	names := FlagNames()
	bound := map[string]string{} // flag → field
	for field, flag := range names {
		bound[flag] = field
	}
	fs.VisitAll(func(f *pflag.Flag) {
		field, ok := bound[f.Name]
		if !ok {
			t.Errorf("--%s is bound to no field", f.Name)
			return
		}
		if sets := addrs[reflect.ValueOf(f.Value).Pointer()]; sets != field {
			t.Errorf("--%s is bound to %s, but sets %q", f.Name, field, sets)
		}
	})
	if len(bound) != len(names) || len(names) != len(addrs) {
		t.Errorf("%d fields bound to %d flags; Config has %d fields", len(names), len(bound), len(addrs))
	}
}

// TestFlagHelpNamesFlags: help text names other fields as {Field}, and
// AddFlags writes each as the flag that sets it.
func TestFlagHelpNamesFlags(t *testing.T) {
	fs := pflag.NewFlagSet("stub", pflag.ContinueOnError)
	new(Config).AddFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if helpField.MatchString(f.Usage) {
			t.Errorf("--%s: help names a field no flag sets: %s", f.Name, f.Usage)
		}
	})
	for flag, names := range map[string]string{
		"believed-latency": "(0 = same as --latency)", "stall-every": "must exceed --stall-for",
		"clock-skew": "with --arrival-stamp header:NAME", "batch-slots": "(0 = --workers;",
		"primary-budget": "per --budget-window", "borrow-budget": "per --budget-window",
		"borrow-slow-factor": "times --borrow-latency",
	} {
		if u := fs.Lookup(flag).Usage; !strings.Contains(u, names) {
			t.Errorf("--%s: help %q, want it to hold %q", flag, u, names)
		}
	}
}

// TestStartListenError: a Listen the stub cannot listen on is a
// *FieldError of Listen, over the listener's error.
func TestStartListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	s, err := NewUnstartedServer(testConfig(func(c *Config) { c.Listen = addr }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Start()
	var fe *FieldError
	var op *net.OpError
	if !errors.As(err, &fe) || fe.Field != "Listen" || !errors.As(err, &op) {
		t.Fatalf("Start on a port in use: %v (%T), want a FieldError of Listen over a *net.OpError", err, err)
	}
	if want := "stub: Listen " + addr + ": " + op.Error(); err.Error() != want {
		t.Errorf("Start: %q, want %q", err, want)
	}
	if got, want := fe.Message(func(string) string { return "--listen" }), "stub: --listen "+addr+": "; !strings.HasPrefix(got, want) {
		t.Errorf("rendered: %q, want it to start %q", got, want)
	}
}
