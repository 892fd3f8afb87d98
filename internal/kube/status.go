package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// JobStatus is what the run needs of `kubectl get job NAME -o json`.
type JobStatus struct {
	Complete bool // condition Complete is True: every index succeeded
	Failed   bool // condition Failed is True: the Job ended with an index failed, or past its deadline
	// Reason and Message are the Failed condition's (e.g.
	// FailedIndexes, DeadlineExceeded).
	Reason, Message string
	Active          int
	Ready           int
	Succeeded       int
	FailedPods      int   // status.failed: pods that failed
	FailedIndexes   []int // status.failedIndexes, read from its "1,3-5"
	// Shards is spec.completions; Args and StartAt are the shard
	// container's arguments and StartEnv's value: what a runner that did
	// not create the Job (collect, status) learns of the run from it.
	Shards  int
	Args    []string
	StartAt string
	// Created is metadata.creationTimestamp, as given (RFC 3339).
	Created string
	// Namespace is metadata.namespace; Planned is AnnotationPlanned's
	// value (0 when it holds none).
	Namespace string
	Planned   time.Duration
}

// Ended reports whether the Job is over, by success or failure.
func (s JobStatus) Ended() bool { return s.Complete || s.Failed }

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ParseJob reads `kubectl get job NAME -o json`.
func ParseJob(b []byte) (JobStatus, error) {
	var j struct {
		Kind     string `json:"kind"`
		Metadata struct {
			CreationTimestamp string            `json:"creationTimestamp"`
			Namespace         string            `json:"namespace"`
			Annotations       map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Completions int `json:"completions"`
			Template    struct {
				Spec struct {
					Containers []struct {
						Name string   `json:"name"`
						Args []string `json:"args"`
						Env  []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
		Status struct {
			Conditions    []condition `json:"conditions"`
			Active        int         `json:"active"`
			Ready         *int        `json:"ready"`
			Succeeded     int         `json:"succeeded"`
			Failed        int         `json:"failed"`
			FailedIndexes *string     `json:"failedIndexes"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return JobStatus{}, fmt.Errorf("job: not kubectl's JSON: %v", err)
	}
	if j.Kind != "Job" {
		return JobStatus{}, fmt.Errorf("job: kubectl returned a %q, not a Job", j.Kind)
	}
	s := JobStatus{Active: j.Status.Active, Succeeded: j.Status.Succeeded, FailedPods: j.Status.Failed,
		Shards: j.Spec.Completions, Created: j.Metadata.CreationTimestamp, Namespace: j.Metadata.Namespace}
	if d, err := time.ParseDuration(j.Metadata.Annotations[AnnotationPlanned]); err == nil && d > 0 {
		s.Planned = d
	}
	for _, c := range j.Spec.Template.Spec.Containers {
		if c.Name != Container {
			continue
		}
		s.Args = c.Args
		for _, e := range c.Env {
			if e.Name == StartEnv {
				s.StartAt = e.Value
			}
		}
	}
	if j.Status.Ready != nil {
		s.Ready = *j.Status.Ready
	}
	for _, c := range j.Status.Conditions {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case "Complete":
			s.Complete = true
		case "Failed":
			s.Failed, s.Reason, s.Message = true, c.Reason, c.Message
		}
	}
	if j.Status.FailedIndexes != nil {
		idx, err := ParseIndexes(*j.Status.FailedIndexes)
		if err != nil {
			return JobStatus{}, fmt.Errorf("job: status.failedIndexes: %v", err)
		}
		s.FailedIndexes = idx
	}
	return s, nil
}

// ParseIndexes reads a Job's list of indexes, "1,3-5,7", in order.
func ParseIndexes(s string) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q: not an index list such as 1,3-5", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > MaxShards {
				return nil, fmt.Errorf("%q: not an index list such as 1,3-5", s)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Pod is what the run needs of one pod of `kubectl get pods -o json`.
type Pod struct {
	Name  string
	Index int    // its completion index; -1 when it has none
	Phase string // Pending, Running, Succeeded, Failed, Unknown
	// Deleting: the pod is being deleted (metadata.deletionTimestamp).
	Deleting bool
	// Unschedulable is the scheduler's message when the pod cannot be
	// placed (condition PodScheduled False, reason Unschedulable), e.g.
	// "0/1 nodes are available: 1 Insufficient cpu."; "" otherwise.
	Unschedulable string
	// Waiting is why its container has not started: its reason and
	// message ("ErrImagePull: …"); "" when it has, or none is given.
	Waiting string
	// WaitingReason is Waiting's reason alone ("ErrImagePull").
	WaitingReason string
	// Terminated: its container exited, with ExitCode and Reason
	// (Completed, Error, OOMKilled, …).
	Terminated bool
	ExitCode   int
	Reason     string
	// Started: its container is running or has run.
	Started bool
}

// ParsePods reads `kubectl get pods -l … -o json` (a List of pods), in
// the order given.
func ParsePods(b []byte) ([]Pod, error) {
	var l struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name              string            `json:"name"`
				Labels            map[string]string `json:"labels"`
				Annotations       map[string]string `json:"annotations"`
				DeletionTimestamp *string           `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				Phase             string      `json:"phase"`
				Conditions        []condition `json:"conditions"`
				ContainerStatuses []struct {
					Name  string `json:"name"`
					State struct {
						Waiting *struct {
							Reason  string `json:"reason"`
							Message string `json:"message"`
						} `json:"waiting"`
						Running    *struct{} `json:"running"`
						Terminated *struct {
							ExitCode int    `json:"exitCode"`
							Reason   string `json:"reason"`
						} `json:"terminated"`
					} `json:"state"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("pods: not kubectl's JSON: %v", err)
	}
	if l.Kind != "List" && l.Kind != "PodList" {
		return nil, fmt.Errorf("pods: kubectl returned a %q, not a list of pods", l.Kind)
	}
	pods := make([]Pod, 0, len(l.Items))
	for _, it := range l.Items {
		p := Pod{Name: it.Metadata.Name, Index: -1, Phase: it.Status.Phase, Deleting: it.Metadata.DeletionTimestamp != nil}
		idx, ok := it.Metadata.Annotations[AnnotationIndex]
		if !ok {
			idx, ok = it.Metadata.Labels[AnnotationIndex]
		}
		if ok {
			if i, err := strconv.Atoi(idx); err == nil && i >= 0 {
				p.Index = i
			}
		}
		for _, c := range it.Status.Conditions {
			if c.Type == "PodScheduled" && c.Status == "False" && c.Reason == "Unschedulable" {
				p.Unschedulable = c.Message
				if p.Unschedulable == "" {
					p.Unschedulable = "Unschedulable"
				}
			}
		}
		for _, cs := range it.Status.ContainerStatuses {
			if cs.Name != Container && len(it.Status.ContainerStatuses) > 1 {
				continue
			}
			switch st := cs.State; {
			case st.Terminated != nil:
				p.Started, p.Terminated = true, true
				p.ExitCode, p.Reason = st.Terminated.ExitCode, st.Terminated.Reason
			case st.Running != nil:
				p.Started = true
			case st.Waiting != nil:
				p.Waiting, p.WaitingReason = st.Waiting.Reason, st.Waiting.Reason
				if st.Waiting.Message != "" {
					p.Waiting += ": " + st.Waiting.Message
				}
			}
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// Running reports whether the pod's container runs, or has run: a shard
// that is there at its start.
func (p Pod) Running() bool { return p.Started || p.Phase == "Running" || p.Phase == "Succeeded" }

// pullFailures are the waiting reasons of a container whose image the
// node cannot get: the kubelet retries some of them with a back-off, but
// a run's shared start will not wait for that.
var pullFailures = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"}

// PullFailed reports whether the pod's container waits for an image the
// node could not pull.
func (p Pod) PullFailed() bool { return slices.Contains(pullFailures, p.WaitingReason) }

// State says where the pod is, for a message: "Running", "Pending
// (ContainerCreating)", "Failed, exit 137 (OOMKilled)", "Succeeded".
func (p Pod) State() string {
	s := p.Phase
	if s == "" {
		s = "Unknown"
	}
	switch {
	case p.Terminated && p.ExitCode != 0:
		s += fmt.Sprintf(", exit %d", p.ExitCode)
		if p.Reason != "" && p.Reason != "Error" {
			s += " (" + p.Reason + ")"
		}
	case p.Unschedulable != "":
		s += " (" + p.Unschedulable + ")"
	case p.Waiting != "":
		s += " (" + p.Waiting + ")"
	}
	if p.Deleting {
		s += ", being deleted"
	}
	return s
}
