package main

import (
	"errors"
	"fmt"
	"maps"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/limitmath"
	"github.com/openload/openload/servers/stub"
)

// The library packages validate their configurations in their own words:
// a refused value comes back as a *field.Error naming the Go field (a
// field of a configuration held in another by its path, Schedule.Rate).
// The CLI names the flag instead, from this one table: for each
// configuration it validates, the flag that sets each field.
type fieldScope int

const (
	loadFields   fieldScope = iota // loadtest.Options (engine.Config's fields promoted), by the load command
	expectFields                   // limitmath.PoissonInput, by the load command's --expect-* flags
	modelFields                    // limitmath.PoissonInput, by 'openload model poisson'
	replayFields                   // schedule.ReplayOptions, by the load command
	stubFields                     // stub.Config, by 'openload stub' (stub.Config.AddFlags: stub.FlagNames)
	jobFields                      // kube.Job, by 'openload k8s run' and 'manifest'
)

// fieldFlags is the table: scope → Go field → flag (without its dashes).
// A field that no one flag sets maps to "" (for the load command:
// loadUnflagged). The load command's part is the binding its flags make
// where each is defined (loadFieldFlags), as the stub's is.
var fieldFlags = [...]map[string]string{
	loadFields:   loadFieldFlags,
	expectFields: loadBindings[expectFields],
	modelFields:  modelFieldFlags,
	replayFields: loadBindings[replayFields],
	// The stub's binding, made where stub.Config.AddFlags defines each
	// flag: one table, so it cannot drift from the flags.
	stubFields: stub.FlagNames(),
	jobFields:  jobFieldFlags,
}

// fieldBinding records, as the flags of a command are defined, the fields
// each sets: a field is bound where its flag is, whether the flag sets it
// directly or through what validate parses from it (-H → Header).
type fieldBinding map[string]string

// bind records that flag sets fields and returns flag, for the line that
// defines it. A field bound to two flags is a mistake of the definitions,
// found as the package starts (loadFieldFlags).
func (b fieldBinding) bind(flag string, fields ...string) string {
	for _, f := range fields {
		if other, ok := b[f]; ok && other != flag {
			panic(fmt.Sprintf("field %s bound to --%s and --%s", f, other, flag))
		}
		b[f] = flag
	}
	return flag
}

// loadUnflagged are the fields of loadtest.Options no one flag sets: what
// runLoad sets itself (the URL, the built-in stub, the outputs' writers,
// a scenario's sessions), what is derived from several flags (Lean,
// Epoll, GRPC: --grpc-method's call, grpcflags.go; Protocol is named by
// fieldValueFlags), and what the command leaves at its default
// (GRPCMaxMessage: grpc-go's 4 MiB). Validate
// never refuses those from what the user typed, and an error naming one
// keeps its Go name.
var loadUnflagged = []string{"URL", "Progress", "Observe", "Transport", "Protocol", "TLS", "Lean", "Epoll", "BodyTokens", "BodyOffset",
	"GRPC", "GRPCMaxMessage", "BuiltinStub", "StubChild", "Request", "AutoHeaders", "Verify.DipRatio", "Verify.DipMin", "Sessions"}

// scopeBindings are the bindings one command's flag definitions make, a
// fieldBinding for each struct its flags fill (the load command fills
// loadtest.Options, the --expect-* model's input and the replay's
// options).
type scopeBindings map[fieldScope]fieldBinding

// in is the binding of scope, made on first use.
func (s scopeBindings) in(scope fieldScope) fieldBinding {
	if s[scope] == nil {
		s[scope] = fieldBinding{}
	}
	return s[scope]
}

// loadBindings are the load command's bindings, as its definitions make
// them (boundLoadFlags).
var loadBindings = func() scopeBindings {
	_, bs := boundLoadFlags(new(loadOptions))
	return bs
}()

// loadFieldFlags is the load command's table of loadtest.Options: the
// binding its flags' definitions make, and loadUnflagged.
var loadFieldFlags = func() map[string]string {
	b := maps.Clone(loadBindings[loadFields])
	for _, f := range loadUnflagged {
		b[f] = ""
	}
	return b
}()

// modelFieldFlags is 'openload model poisson”s table, as its flags'
// definitions bind them (modelFlags).
var modelFieldFlags = func() map[string]string {
	b := fieldBinding{}
	modelFlags(new(limitmath.PoissonInput), new(bool), b)
	return b
}()

// jobFieldFlags is the k8s commands' table of kube.Job, as their flags'
// definitions bind them (k8sOptions.flags); the Job's start and metrics
// port come from the run's own --start-at and --metrics-addr (the load
// command's), and Args, Deadline, Files, SecretEnv and Planned (the
// schedule's length) no one flag sets.
var jobFieldFlags = func() map[string]string {
	b := fieldBinding{}
	new(k8sOptions).flags(newFlagSet("openload k8s"), b)
	b["StartAt"], b["MetricsPort"] = "start-at", "metrics-addr"
	b["Args"], b["Deadline"], b["Planned"] = "", "", ""
	b["Files"], b["SecretEnv"] = "", "" // from the run's file and header flags (k8sfiles.go)
	return b
}()

// fieldValueFlags names, by scope, the fields that one of several flags
// sets, each flag to a value: an error about such a field names the flag
// that gave it its value.
var fieldValueFlags = map[fieldScope]map[string]map[any]string{
	loadFields: {"Protocol": {engine.HTTP2: "http2", engine.H2C: "h2c"}},
}

// flagError returns err with every field it names called by its flag in
// scope, or err itself when it is not a *field.Error.
func flagError(scope fieldScope, err error) error {
	var fe *field.Error
	if !errors.As(err, &fe) {
		return err
	}
	return errors.New(fe.Message(func(f string) string {
		if flag := fieldFlags[scope][f]; flag != "" {
			return "--" + flag
		}
		if flag, ok := fieldValueFlags[scope][f][fe.Value]; ok && f == fe.Field {
			return "--" + flag
		}
		return f // a field without a flag: TestFieldFlags keeps the table whole
	}))
}
