package main

import (
	"errors"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/targets/stub"
)

// The library packages validate their configurations in their own words:
// a refused value comes back as a *field.Error naming the Go field (a
// field of a configuration held in another by its path, Schedule.Rate).
// The CLI names the flag instead, from this one table: for each
// configuration it validates, the flag that sets each field.
type fieldScope int

const (
	loadFields   fieldScope = iota // loadtest.Options (engine.Config's fields promoted), by the load command
	expectFields                   // model.PoissonInput, by the load command's --expect-* flags
	modelFields                    // model.PoissonInput, by 'openload model poisson'
	replayFields                   // schedule.ReplayOptions, by the load command
	stubFields                     // stub.Config, by 'openload stub' (stub.Config.AddFlags: stub.FlagNames)
	jobFields                      // kube.Job, by 'openload k8s run' and 'manifest'
)

// fieldFlags is the table: scope → Go field → flag (without its dashes).
// A field that no one flag sets maps to "": what runLoad sets itself (the
// URL, the built-in stub, the outputs' writers), what is derived from
// several flags (Lean, Epoll; Protocol is named by fieldValueFlags), and
// what the command leaves at its default. Validate never refuses those
// from what the user typed, and an error naming one keeps its Go name.
var fieldFlags = [...]map[string]string{
	loadFields: {
		// engine.Config
		"URL": "", "Method": "method", "Header": "header", "Body": "body",
		"Connections": "connections", "Timeout": "timeout", "DialTimeout": "dial-timeout", "Drain": "drain",
		"ClassHeaders": "class-header", "ServerTiming": "server-timing", "StampHeader": "stamp-header",
		"Progress": "", "Observe": "", "Transport": "", "Protocol": "", "MaxStreams": "max-streams", "TLS": "",
		"Lean": "", "Epoll": "",
		"Retry.On": "retry-on", "Retry.Retries": "retries", "Retry.Backoff": "retry-backoff", "Retry.Jitter": "retry-jitter",
		"Retry.Seed": "seed", "Retry.Budget": "retry-budget", "Retry.MinPerSec": "retry-min-per-sec", "Retry.Window": "retry-budget-window",
		"Insecure": "insecure", "FollowRedirects": "follow-redirects", "MaxBody": "max-body", "Resend": "resend",
		"Bodies": "body-file", "BodySample": "body-sample", "BodySeed": "seed", "BodyTokens": "", "Stream": "stream",
		"Targets": "targets", "TargetWeights": "targets", "TargetSeed": "seed",
		// loadtest.Options
		"BuiltinStub": "", "Redact": "redact",
		"Schedule.Kind": "arrival", "Schedule.Rate": "rate", "Schedule.Duration": "duration", "Schedule.Seed": "seed",
		"Schedule.Stages": "stages", "Schedule.Burstiness": "burstiness",
		"Sched": "arrivals", "Log": "log", "IntervalLog": "hlog",
		"Verify.SendDelayP99": "send-delay-budget", "Verify.DipRatio": "", "Verify.DipMin": "", "Objectives": "slo",
		"Closed": "closed", "Think": "think", "DwellBound": "dwell-bound", "StubChild": "", "Request": "", "AutoHeaders": "", "Warmup": "warmup",
		"Shard.Index": "shard", "Shard.Of": "shard", "StartAt": "start-at",
		"RequestObjectives": "slo-request",
	},
	expectFields: {
		"Rate": "rate", "Limit": "expect-limit", "Shards": "expect-shards", "Window": "expect-window",
		"Routing": "expect-routing", "Retries": "retries",
	},
	modelFields: {
		"Rate": "rate", "Limit": "limit-rps", "Shards": "limit-shards", "Window": "limit-window",
		"Routing": "limit-routing", "Retries": "retries",
	},
	replayFields: {"Column": "arrivals-column", "Speed": "speed"},
	// The stub's binding, made where stub.Config.AddFlags defines each
	// flag: one table, so it cannot drift from the flags.
	stubFields: stub.FlagNames(),
	jobFields: {
		"Name": "name", "Namespace": "namespace", "Image": "image", "PullPolicy": "image-pull-policy", "Shards": "shards",
		"CPU": "cpu", "Memory": "memory", "MemoryLimit": "memory-limit", "StartAt": "start-at", "MetricsPort": "metrics-addr",
		"Args": "", "Deadline": "",
	},
}

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
