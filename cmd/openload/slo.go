package main

import (
	"fmt"

	"github.com/openload/openload/recorder"
	"github.com/openload/openload/verify"
)

// parseObjectives parses every --slo expression; the error names the first
// bad one.
func parseObjectives(exprs []string) ([]verify.Objective, error) {
	objs := make([]verify.Objective, 0, len(exprs))
	for _, e := range exprs {
		o, err := verify.ParseObjective(e)
		if err != nil {
			return nil, fmt.Errorf("--slo: %v", err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// evaluateObjectives checks objs and, unless one of them is on errors,
// the default objective (verify.DefaultObjective), stores the outcome in
// res, and reports whether one of the user's objectives was breached and
// whether the default one was: the target failed.
//
// An interrupted run is not held to the default objective: the requests
// its stop cut short count as unfinished, which says nothing about the
// target (and it exits 130 anyway). Nor is a run that scheduled nothing.
func evaluateObjectives(res *recorder.Result, objs []verify.Objective) (breached, targetFailed bool) {
	if !res.Interrupted && res.Counts.Scheduled > 0 {
		objs = verify.WithDefault(objs)
	}
	if len(objs) == 0 {
		return false, false
	}
	rs := verify.Evaluate(res, objs)
	res.SLOs = make([]recorder.SLO, len(rs))
	for i, r := range rs {
		res.SLOs[i] = recorder.SLO{Expr: r.Objective.Expr, Measured: r.Measured, Share: r.Objective.Share, Pass: r.Pass, Message: r.Message, Default: r.Objective.Default}
		if !r.Pass {
			if r.Objective.Default {
				targetFailed = true
			} else {
				breached = true
			}
		}
	}
	return breached, targetFailed
}
