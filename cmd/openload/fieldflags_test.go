package main

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/model"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/targets/stub"
)

// The table names, for each configuration, every exported field of its Go
// type and no other, and each by a flag the command has.
func TestFieldFlags(t *testing.T) {
	var lo loadOptions
	load := loadFlags(&lo)
	var in model.PoissonInput
	var help bool
	modelFS := modelFlags(&in, &help)
	stubFS := pflag.NewFlagSet("stub", pflag.ContinueOnError)
	new(stub.Config).AddFlags(stubFS)
	for _, c := range []struct {
		scope fieldScope
		typ   any
		fs    *pflag.FlagSet
	}{
		{retryFields, retry.Policy{}, load},
		{expectFields, model.PoissonInput{}, load},
		{modelFields, model.PoissonInput{}, modelFS},
		{replayFields, schedule.ReplayOptions{}, load},
		{stubFields, stub.Config{}, stubFS},
	} {
		typ := reflect.TypeOf(c.typ)
		table := fieldFlags[c.scope]
		n := 0
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			n++
			flag, ok := table[f.Name]
			switch {
			case !ok:
				t.Errorf("%v: field %s has no flag", typ, f.Name)
			case c.fs.Lookup(flag) == nil:
				t.Errorf("%v: field %s is --%s, which %s does not have", typ, f.Name, flag, c.fs.Name())
			}
		}
		if len(table) != n {
			t.Errorf("%v: the table has %d fields, the type %d", typ, len(table), n)
		}
	}
	if len(fieldFlags) != int(stubFields)+1 {
		t.Errorf("%d scopes in the table", len(fieldFlags))
	}
}

// flagError renders every field a message names by its flag, and leaves
// other errors as they are. The messages here are those no usage golden
// holds.
func TestFlagError(t *testing.T) {
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
		{expectFields, model.PoissonInput{Rate: 10, Limit: 8e10, Shards: 8, Window: time.Second}.Validate(),
			"--expect-limit×window 80000000000 over --expect-shards 8 is more than 1000000000 a shard window: too large to model"},
		{expectFields, model.PoissonInput{Rate: 1e9, Limit: 100, Shards: 1, Window: time.Second, Retries: 1}.Validate(),
			"--rate×window×(--retries+1) 2000000000 is more than 1000000000 attempts a window: too large to model"},
		{modelFields, model.PoissonInput{Rate: 10, Limit: 100, Shards: 1, Window: time.Second, Retries: -1}.Validate(),
			"--retries must be between 0 and 100, got -1"},
		{retryFields, retry.Policy{On: retry.On{Statuses: []int{429}}, Retries: 1, Budget: 0.1, MinPerSec: math.Inf(1), Window: time.Second}.Validate(),
			"--retry-min-per-sec must be a finite number ≥ 0, got +Inf"},
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
	} {
		if got := flagError(c.scope, c.err); got == nil || got.Error() != c.want {
			t.Errorf("flagError(%v) = %v, want %s", c.err, got, c.want)
		}
	}
}
