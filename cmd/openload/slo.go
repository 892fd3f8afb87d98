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

// evaluateObjectives stores the objectives' outcome in res and reports
// whether any was breached.
func evaluateObjectives(res *recorder.Result, objs []verify.Objective) bool {
	if len(objs) == 0 {
		return false
	}
	rs := verify.Evaluate(res, objs)
	res.SLOs = make([]recorder.SLO, len(rs))
	for i, r := range rs {
		res.SLOs[i] = recorder.SLO{Expr: r.Objective.Expr, Measured: r.Measured, Share: r.Objective.Share, Pass: r.Pass, Message: r.Message}
	}
	return verify.Breached(rs)
}
