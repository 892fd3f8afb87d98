package main

import (
	"context"

	"time"

	"github.com/openload/openload/internal/kube"
)

// A start that waits for readiness (internal/kube/startbarrier.go): the
// pods wait on --start-at @FILE; once every pod runs (or at the latest
// by the lead), the runner annotates them with a start startSettle
// ahead, and their downward API volume shows it.

// startSettle is the time from the annotation to the start: for every
// kubelet to rewrite its pod's file (about a second), and each shard to
// read it and dial before it.
const startSettle = 3 * time.Second

// startFormat writes the start set on readiness: RFC 3339 to the
// millisecond, which --start-at reads (parseStartAt).
const startFormat = "2006-01-02T15:04:05.000Z07:00"

// startRelease is the runner's side of the barrier.
type startRelease struct {
	latest  time.Time       // past it the start is set, pods running or not
	created time.Time       // the Job's creation, for the message
	at      time.Time       // the start set; zero until then
	marked  map[string]bool // the pods annotated with it
	lastErr string
}

// release sets the start once every shard's pod runs (or at
// sr.latest), and annotates each pod not yet given it; it returns the
// start, zero while there is none.
func (jr *jobRunner) release(ctx context.Context, sr *startRelease, pods []shardPod) time.Time {
	now := time.Now()
	if sr.at.IsZero() {
		all := true
		for _, sp := range pods {
			if !sp.seen || sp.gone || !sp.pod.Running() {
				all = false
			}
		}
		if !all && now.Before(sr.latest) {
			return time.Time{}
		}
		sr.at = now.Add(startSettle).Truncate(time.Millisecond) // not a whole second: up to one more of waiting
		sr.marked = map[string]bool{}
		if all {
			jr.say("all %d pods running %v after the Job was created: starting at %s (in %v)",
				len(pods), now.Sub(sr.created).Round(100*time.Millisecond), sr.at.UTC().Format(startFormat), sr.at.Sub(now).Round(100*time.Millisecond))
		}
	}
	need := false
	for _, sp := range pods {
		if sp.seen && !sp.gone && !sr.marked[sp.pod.Name] {
			need = true
		}
	}
	if !need {
		return sr.at
	}
	// One call for every pod of the Job, those not listed yet included;
	// --overwrite makes a repeat harmless.
	_, err := jr.kc.run(ctx, nil, "annotate", "pods", "-l", kube.LabelJobName+"="+jr.job, "--overwrite",
		kube.AnnotationStart+"="+sr.at.UTC().Format(startFormat))
	if err != nil {
		if msg := err.Error(); msg != sr.lastErr && ctx.Err() == nil {
			jr.warn("%v: the shards wait for their start (asking again every %v)", err, jr.poll)
			sr.lastErr = msg
		}
		return sr.at
	}
	sr.lastErr = ""
	for _, sp := range pods {
		if sp.seen && !sp.gone {
			sr.marked[sp.pod.Name] = true
		}
	}
	return sr.at
}
