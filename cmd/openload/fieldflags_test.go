package main

import (
	"errors"
	"io"
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/kube"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/limitmath"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
	"github.com/openload/openload/verify"
)

// fieldPaths lists the exported fields of typ as a *field.Error names
// them: an embedded struct's by their promoted names, and those of a field
// that is itself a configuration (a struct with a Validate method) by
// their path, Schedule.Rate.
func fieldPaths(typ reflect.Type, prefix string) []string {
	var paths []string
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		_, validated := f.Type.MethodByName("Validate")
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			paths = append(paths, fieldPaths(f.Type, prefix)...)
		case validated && f.Type.Kind() == reflect.Struct:
			paths = append(paths, fieldPaths(f.Type, prefix+f.Name+".")...)
		default:
			paths = append(paths, prefix+f.Name)
		}
	}
	return paths
}

// The table names, for each configuration, every exported field of its Go
// type (by path, for the configurations it holds) and no other, and each
// by a flag the command has, or by none ("") when no one flag sets it.
func TestFieldFlags(t *testing.T) {
	var lo loadOptions
	load := loadFlags(&lo)
	var in limitmath.PoissonInput
	var help bool
	modelFS := modelFlags(&in, &help, fieldBinding{})
	var kl loadOptions
	var ko k8sOptions
	k8sFS := k8sFlags(&kl, &ko)
	stubFS := pflag.NewFlagSet("stub", pflag.ContinueOnError)
	new(stub.Config).AddFlags(stubFS)
	for _, c := range []struct {
		scope fieldScope
		typ   any
		fs    *pflag.FlagSet
	}{
		{loadFields, loadtest.Options{}, load},
		{expectFields, limitmath.PoissonInput{}, load},
		{modelFields, limitmath.PoissonInput{}, modelFS},
		{replayFields, schedule.ReplayOptions{}, load},
		{stubFields, stub.Config{}, stubFS},
		{jobFields, kube.Job{}, k8sFS},
	} {
		typ := reflect.TypeOf(c.typ)
		table := fieldFlags[c.scope]
		paths := fieldPaths(typ, "")
		for _, f := range paths {
			flag, ok := table[f]
			switch {
			case !ok:
				t.Errorf("%v: field %s is not in the table", typ, f)
			case flag != "" && c.fs.Lookup(flag) == nil:
				t.Errorf("%v: field %s is --%s, which %s does not have", typ, f, flag, c.fs.Name())
			}
			for v, flag := range fieldValueFlags[c.scope][f] {
				if c.fs.Lookup(flag) == nil {
					t.Errorf("%v: field %s = %v is --%s, which %s does not have", typ, f, v, flag, c.fs.Name())
				}
			}
		}
		if len(table) != len(paths) {
			t.Errorf("%v: the table has %d fields, the type %d", typ, len(table), len(paths))
		}
	}
	// The stub's table is stub.FlagNames, the binding AddFlags makes: it
	// names every flag AddFlags registers, each once.
	flags := map[string]bool{}
	for _, flag := range fieldFlags[stubFields] {
		flags[flag] = true
	}
	stubFS.VisitAll(func(f *pflag.Flag) {
		if !flags[f.Name] {
			t.Errorf("stub: --%s names no field of stub.Config in the table", f.Name)
		}
	})
	if len(fieldFlags) != int(jobFields)+1 {
		t.Errorf("%d scopes in the table", len(fieldFlags))
	}
}

// flagError renders every field a message names by its flag, and leaves
// other errors as they are. The messages here are those no usage golden
// holds.
func TestFlagError(t *testing.T) {
	okEngine := engine.Config{Connections: 1, Timeout: time.Second}
	stubWith := func(f func(*stub.Config)) error {
		c := stub.DefaultConfig()
		f(&c)
		return c.Validate()
	}
	_, replayErr := schedule.LoadReplay(strings.NewReader("1h\n"), "a.txt", schedule.ReplayOptions{Speed: 1e-15})
	for _, c := range []struct {
		scope fieldScope
		err   error
		want  string
	}{
		{expectFields, limitmath.PoissonInput{Rate: 10, Limit: 8e10, Shards: 8, Window: time.Second}.Validate(),
			"--expect-limit×window 80000000000 over --expect-shards 8 is more than 1000000000 a shard window: too large to model"},
		{expectFields, limitmath.PoissonInput{Rate: 1e9, Limit: 100, Shards: 1, Window: time.Second, Retries: 1}.Validate(),
			"--rate×window×(--retries+1) 2000000000 is more than 1000000000 attempts a window: too large to model"},
		{modelFields, limitmath.PoissonInput{Rate: 10, Limit: 100, Shards: 1, Window: time.Second, Retries: -1}.Validate(),
			"--retries must be between 0 and 100, got -1"},
		{loadFields, field.In("Retry", retry.Policy{On: retry.On{Statuses: []int{429}}, Retries: 1, Budget: 0.1, MinPerSec: math.Inf(1), Window: time.Second}.Validate()),
			"--retry-min-per-sec must be a finite number ≥ 0, got +Inf"},
		// The engine's configuration, promoted into loadtest.Options.
		{loadFields, engine.Config{Connections: 1, Timeout: time.Second, Drain: -time.Second}.Validate(),
			"--drain must be ≥ 0, got -1s"},
		{loadFields, engine.Config{Connections: 1, Timeout: time.Second, MaxStreams: -1}.Validate(),
			"--max-streams must be ≥ 0, got -1"},
		{loadFields, engine.Config{Connections: 1, Timeout: time.Second, ClassHeaders: []string{"a", "b", "c", "d", "e"}}.Validate(),
			"--class-header given 5 times, at most 4"},
		{loadFields, engine.Config{Connections: 1, Timeout: time.Second, ClassHeaders: []string{"X Y"}}.Validate(),
			`--class-header "X Y" is not a valid header name`},
		// Protocol is named by the flag that chose it.
		{loadFields, engine.Config{Connections: 1, Timeout: time.Second, Protocol: engine.HTTP2, URL: mustParse(t, "http://x/")}.Validate(),
			"--http2 is HTTP/2 over TLS and needs an https URL, got http://x/"},
		{loadFields, engine.Config{Connections: 1, Timeout: time.Second, Protocol: engine.H2C, URL: mustParse(t, "https://x/")}.Validate(),
			"--h2c is HTTP/2 without TLS (prior knowledge) and needs an http URL, got https://x/"},
		// loadtest.Options' own, and what it holds.
		{loadFields, (&loadtest.Options{Config: okEngine, Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 10, Duration: time.Second}, DwellBound: -time.Second}).Validate(),
			"--dwell-bound must be > 0, got -1s"},
		{loadFields, (&loadtest.Options{Config: okEngine, Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 10, Duration: time.Second}, Verify: verify.Options{SendDelayP99: -1}}).Validate(),
			"--send-delay-budget must be > 0, got -1ns"},
		{loadFields, (&loadtest.Options{Config: okEngine, Schedule: schedule.Spec{Kind: schedule.Poisson, Duration: time.Second}, Closed: true}).Validate(),
			`--closed paces its users evenly: --arrival "poisson" is not supported with it`},
		{loadFields, (&loadtest.Options{Config: okEngine, Schedule: schedule.Spec{Duration: -time.Second}, Closed: true}).Validate(),
			"--duration must be > 0, got -1s"},
		// A field without a flag keeps its Go name.
		{loadFields, field.Errorf("URL", nil, "{URL} is missing"), "URL is missing"},
		{replayFields, replayErr, "a.txt: the arrival at 1h0m0s is beyond 2562047h47m16.854775807s at --speed 1e-15"},
		{stubFields, stubWith(func(c *stub.Config) { c.Window, c.Bucket = time.Second, 2*time.Second }),
			"--window must be >= --bucket (2s), got 1s"},
		{stubFields, stubWith(func(c *stub.Config) { c.StallFor, c.StallEvery = 2*time.Second, time.Second }),
			"--stall-every must be > --stall-for (2s), got 1s"},
		{stubFields, stubWith(func(c *stub.Config) { c.Policy, c.QueueCap = stub.PolicyBounded, 0 }),
			"--queue-cap must be > 0 with --policy bounded, got 0"},
		{stubFields, stubWith(func(c *stub.Config) { c.ArrivalStamp = "header:X Y" }),
			`--arrival-stamp "header:X Y": "X Y" is not a valid header name`},
		{stubFields, errors.New("Workers is not a field error"), "Workers is not a field error"},
		// A merge's refusals name the run's options (loadtest.Options).
		{loadFields, mergeErr(result.MergeInput{Name: "one.json", Result: &result.Result{}}),
			"one.json: not a shard's result (run with --shard i/N)"},
		{loadFields, mergeErr(result.MergeInput{Name: "a.json", Result: shardResult(0, "")}, result.MergeInput{Name: "b.json", Result: shardResult(1, "2026-12-01T15:00:05Z")}),
			"b.json: --start-at 2026-12-01T15:00:05Z, but a.json has none: not a shard of the same run"},
		{loadFields, result.MergeIntervalLogs(io.Discard, result.IntervalLogInput{Name: "a.hlog", Log: []byte("#[StartTime: 1000 (seconds since epoch)]\n")},
			result.IntervalLogInput{Name: "b.hlog", Log: []byte("#[StartTime: 2000 (seconds since epoch)]\n")}),
			"b.hlog: starts at 2000, but a.hlog at 1000: not shards of one --start-at"},
	} {
		if got := flagError(c.scope, c.err); got == nil || got.Error() != c.want {
			t.Errorf("flagError(%v) = %v, want %s", c.err, got, c.want)
		}
	}
}

// mergeErr is recorder.Merge's error.
func mergeErr(in ...result.MergeInput) error {
	_, err := result.Merge(in...)
	return err
}

// shardResult is an empty result of shard index of 2, started at startAt.
func shardResult(index int, startAt string) *result.Result {
	return &result.Result{Config: result.Config{StartAt: startAt, Shard: &result.ShardConfig{Of: 2, Indexes: []int{index}}}}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
