package main

import (
	"errors"

	"github.com/openload/openload/field"
)

// The library packages validate their configurations in their own words:
// a refused value comes back as a *field.Error naming the Go field. The
// CLI names the flag instead, from this one table: for each configuration
// it validates, the flag that sets each field.
type fieldScope int

const (
	retryFields  fieldScope = iota // retry.Policy, by the load command's --retry-* flags
	expectFields                   // model.PoissonInput, by the load command's --expect-* flags
	modelFields                    // model.PoissonInput, by 'openload model poisson'
	replayFields                   // schedule.ReplayOptions, by the load command
	stubFields                     // stub.Config, by 'openload stub' (stub.Config.AddFlags)
)

// fieldFlags is the table: scope → Go field → flag (without its dashes).
var fieldFlags = [...]map[string]string{
	retryFields: {
		"On": "retry-on", "Retries": "retries", "Backoff": "retry-backoff", "Jitter": "retry-jitter",
		"Seed": "seed", "Budget": "retry-budget", "MinPerSec": "retry-min-per-sec", "Window": "retry-budget-window",
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
	stubFields: {
		"Listen": "listen", "Workers": "workers", "Latency": "latency", "BelievedLatency": "believed-latency",
		"Policy": "policy", "QueueCap": "queue-cap", "WaitBudget": "wait-budget", "Estimator": "estimator",
		"Window": "window", "Bucket": "bucket", "MinSamples": "min-samples", "MaxQueueWait": "max-queue-wait",
		"StallAt": "stall-at", "StallFor": "stall-for", "StallEvery": "stall-every",
		"Deadline": "deadline", "DeadlineStatus": "deadline-status", "ArrivalStamp": "arrival-stamp",
		"ClockSkew": "clock-skew", "DeadlinePosition": "deadline-position",
		"LimitRPS": "limit-rps", "LimitShards": "limit-shards", "LimitWindow": "limit-window",
		"LimitRouting": "limit-routing", "LimitSeed": "limit-seed", "H2C": "h2c",
	},
}

// flagError returns err with every field it names called by its flag in
// scope, or err itself when it is not a *field.Error.
func flagError(scope fieldScope, err error) error {
	var fe *field.Error
	if !errors.As(err, &fe) {
		return err
	}
	return errors.New(fe.Message(func(f string) string {
		if flag, ok := fieldFlags[scope][f]; ok {
			return "--" + flag
		}
		return f // a field without a flag: TestFieldFlags keeps the table whole
	}))
}
