package verify

import (
	"github.com/openload/openload/result"
)

// Class is what the outcome of a run calls for, in increasing precedence:
// a later class outranks every earlier one (Worse). The CLI maps each to
// its exit code; nothing here knows the codes.
type Class int

const (
	// ClassValid: every check passed (warnings allowed) and every objective
	// was met.
	ClassValid Class = iota
	// ClassBreached: the measurement holds, but an objective of the user's was
	// not met, or had no data.
	ClassBreached
	// ClassTargetFailed: the measurement holds, but a default objective was
	// not met (too many requests without an answer, or refused as client
	// errors): the target failed.
	ClassTargetFailed
	// ClassInvalid: a check failed; the measurement cannot be trusted.
	ClassInvalid
	// ClassInterrupted: the run was stopped before its end.
	ClassInterrupted
)

// Worse reports whether a outranks b.
func Worse(a, b Class) bool { return a > b }

// Outcome is what one run, a merge of shards, a sweep's point or a repeat
// ends in, besides its result: the objectives evaluated (openload's
// defaults included) and the class of the whole. The result holds the
// rest (its checks, and the objectives stored), so that ClassOf reads the
// same class back from a saved one.
type Outcome struct {
	Objectives []SLOResult
	Class      Class
}

// Judge evaluates objs, with the default objectives (WithDefault), on
// res, stores them in res.SLOs, and classifies the outcome with res's
// checks (res.Checks, set from the findings: ToChecks). It is the one
// place a verdict is made: a run, a merge, a sweep's point and a repeat
// all end here, under one rule.
func Judge(res *result.Result, objs []Objective) Outcome {
	rs := Evaluate(res, WithDefault(objs))
	res.SLOs = make([]result.SLO, len(rs))
	for i, r := range rs {
		res.SLOs[i] = result.SLO{Expr: r.Objective.Expr, Measured: r.Measured, Share: r.Objective.Share, Count: r.Objective.Count,
			Pass: r.Pass, NoData: r.NoData, Message: r.Message, Default: r.Objective.Default}
	}
	return Outcome{Objectives: rs, Class: ClassOf(res)}
}

// ClassOf classifies a result from what it holds (its interruption, its
// checks and its stored objectives), so that a saved result reads back to
// the outcome it was written with.
func ClassOf(res *result.Result) Class {
	switch {
	case res.Interrupted:
		return ClassInterrupted
	case checksFailed(res.Checks):
		return ClassInvalid
	case TargetFailed(res):
		return ClassTargetFailed
	case UserBreached(res):
		return ClassBreached
	}
	return ClassValid
}

// UserBreached reports whether an objective of the user's (not a default)
// was not met in res.
func UserBreached(res *result.Result) bool {
	for _, s := range res.SLOs {
		if !s.Pass && !s.Default {
			return true
		}
	}
	return false
}

func checksFailed(checks []result.Check) bool {
	for _, c := range checks {
		if c.Severity == string(Fail) {
			return true
		}
	}
	return false
}
