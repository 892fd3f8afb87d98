// Package kube renders the Kubernetes Indexed Job that runs the shards of
// one openload schedule, and reads what kubectl says about it: the Job's
// and its pods' status (kubectl get -o json) and a shard's result in its
// pod's log (kubectl logs). It runs nothing: the command line runs
// kubectl and decides what each state means for the run.
//
// One Job, rendered by one function (Job.YAML), is what both
// `openload k8s run` creates and deploy/kubernetes/job.yaml holds, so the
// two cannot drift apart.
package kube

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/field"
)

// The names Kubernetes gives an Indexed Job's pods, and those of the Job
// rendered here.
const (
	// LabelJobName is the label the Job controller puts on every pod of
	// a Job, its value the Job's name.
	LabelJobName = "batch.kubernetes.io/job-name"
	// AnnotationIndex is the annotation (and label) holding a pod's
	// completion index.
	AnnotationIndex = "batch.kubernetes.io/job-completion-index"
	// IndexEnv is the variable the Job controller sets to a pod's index.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// Container is the name of the one container of a shard's pod.
	Container = "openload"
	// StartEnv is the variable holding the shared start (--start-at).
	StartEnv = "START_AT"
	// StartPlaceholder is StartEnv's value in a manifest rendered without
	// a start: replace it on apply (deploy/README.md).
	StartPlaceholder = "START_AT_TIME"
	// AppName is the app.kubernetes.io/name label of the Job and its pods.
	AppName = "openload"
	// AnnotationStart is the pod annotation a runner sets to the shared
	// start once every pod runs; StartBarrier, StartEnv's value for such
	// a Job, has each shard wait (--start-at @FILE) until the downward API
	// volume (startbarrier.go) shows it as a file.
	AnnotationStart = "openload/start-at"
	StartBarrier    = "@" + startDir + "/" + startFile
	// AnnotationPlanned is the Job's annotation holding Job.Planned, for
	// a runner that did not create it ('openload k8s status').
	AnnotationPlanned = "openload.dev/planned"
)

// ScrapeInterval is the scrape interval of the shipped PodMonitor
// (deploy/kubernetes/podmonitor.yaml; a test in cmd/openload holds the
// two equal). A shard whose metrics leave before the scrape that follows
// its final figures loses them, so the Job's --metrics-grace is at least
// MetricsGrace.
const ScrapeInterval = 10 * time.Second

// MetricsGrace is the --metrics-grace rendered into a Job that serves
// metrics without one: two scrape intervals, so that a scrape late by up
// to one interval (a busy Prometheus, a scrape that timed out) still
// finds the shard. A shard leaves as soon as the scrape after its final
// figures is served, so the grace costs only when none comes.
const MetricsGrace = 2 * ScrapeInterval

// MaxShards bounds a Job's completions: far above what a run needs, low
// enough to catch a slipped finger.
const MaxShards = 1000

// Job is what varies between runs of the Indexed Job. Every shard runs
// the image's openload with Args, the same in every pod: each pod's
// index is in IndexEnv, the shared start in StartEnv.
type Job struct {
	Name        string        // metadata.name: a DNS label
	Namespace   string        // metadata.namespace; "" leaves it to kubectl
	Image       string        // the image holding openload as its entrypoint
	Shards      int           // completions = parallelism = N
	CPU         string        // each pod's CPU request, e.g. 500m (no limit: a throttled generator sends late)
	Memory      string        // each pod's memory request, e.g. 256Mi
	MemoryLimit string        // each pod's memory limit; "" none
	StartAt     string        // StartEnv's value: an RFC 3339 time, or StartPlaceholder
	Args        []string      // the container's arguments: the shard's (its index from IndexEnv, its start from StartEnv), the run's, its URL
	MetricsPort int           // the port the run serves its metrics on, declared and annotated for Prometheus; 0 none
	Deadline    time.Duration // activeDeadlineSeconds: the cluster stops the Job past it; 0 never
	Planned     time.Duration // the schedule's length from the start (AnnotationPlanned); 0 not said
	PullPolicy  string        // imagePullPolicy; "" the cluster's default (IfNotPresent for a local tag: ImagePolicy)

	// What the run reads, carried into its pods (files.go).
	Files     []File      // mounted read-only; Args name them by File.Path
	SecretEnv []SecretEnv // taken from the Secret as variables; Args name them as $(Name)

	// Placement and identity (placement.go); each as typed.
	NodeSelector   []string // key=value: only nodes with these labels
	Tolerations    []string // key=value:Effect or key:Effect: taints the pods tolerate
	OnePerNode     bool     // at most one shard a node (required, not preferred, anti-affinity)
	PullSecrets    []string // imagePullSecrets, by name
	ServiceAccount string   // serviceAccountName; "" the namespace's default
	PodLabels      []string // key=value: more labels on each pod
	PodAnnotations []string // key=value: annotations on each pod
	PriorityClass  string   // priorityClassName; "" the cluster's default
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	cpuQty   = regexp.MustCompile(`^([0-9]+m|[0-9]+(\.[0-9]{1,3})?)$`)
	memQty   = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$`)
)

// maxNameLen leaves room in a pod's name (JOB-INDEX-xxxxx) and host name
// (JOB-INDEX, at most 63) for the index.
const maxNameLen = 52

// Validate checks what the cluster would refuse, in the Job's own words:
// a *field.Error naming the field.
func (j Job) Validate() error {
	switch {
	case len(j.Name) > maxNameLen || !dnsLabel.MatchString(j.Name):
		return field.Errorf("Name", j.Name, "{Name} %q: want a DNS label (lower-case letters, digits, '-') of at most %d characters", j.Name, maxNameLen)
	case j.Namespace != "" && (len(j.Namespace) > 63 || !dnsLabel.MatchString(j.Namespace)):
		return field.Errorf("Namespace", j.Namespace, "{Namespace} %q: want a DNS label (lower-case letters, digits, '-')", j.Namespace)
	case strings.TrimSpace(j.Image) == "" || strings.ContainsAny(j.Image, " \t\n"):
		return field.Errorf("Image", j.Image, "{Image} %q: want an image reference such as openload:dev", j.Image)
	case j.Shards < 1 || j.Shards > MaxShards:
		return field.Errorf("Shards", j.Shards, "{Shards} %d: want 1 to %d", j.Shards, MaxShards)
	case !cpuQty.MatchString(j.CPU):
		return field.Errorf("CPU", j.CPU, "{CPU} %q: want cores (1, 0.5) or millicores (500m)", j.CPU)
	case !memQty.MatchString(j.Memory):
		return field.Errorf("Memory", j.Memory, "{Memory} %q: want bytes with a unit, such as 256Mi or 1Gi", j.Memory)
	case j.MemoryLimit != "" && !memQty.MatchString(j.MemoryLimit):
		return field.Errorf("MemoryLimit", j.MemoryLimit, "{MemoryLimit} %q: want bytes with a unit, such as 1Gi", j.MemoryLimit)
	case j.StartAt == "":
		return field.Errorf("StartAt", j.StartAt, "{StartAt} is empty: give a time, or StartPlaceholder")
	case j.MetricsPort < 0 || j.MetricsPort > 65535:
		return field.Errorf("MetricsPort", j.MetricsPort, "{MetricsPort} %d: want 0 (none) or a port", j.MetricsPort)
	case j.Deadline < 0:
		return field.Errorf("Deadline", j.Deadline, "{Deadline} %v: want ≥ 0", j.Deadline)
	case j.PullPolicy != "" && j.PullPolicy != "Always" && j.PullPolicy != "IfNotPresent" && j.PullPolicy != "Never":
		return field.Errorf("PullPolicy", j.PullPolicy, "{PullPolicy} %q: want Always, IfNotPresent or Never", j.PullPolicy)
	}
	if err := j.validatePlacement(); err != nil {
		return err
	}
	if err := j.validateFiles(); err != nil {
		return err
	}
	if j.MemoryLimit != "" {
		req, _ := Bytes(j.Memory)
		lim, _ := Bytes(j.MemoryLimit)
		if lim < req {
			return field.Errorf("MemoryLimit", j.MemoryLimit, "{MemoryLimit} %s is below {Memory}, %s", j.MemoryLimit, j.Memory)
		}
	}
	return nil
}

// MilliCPU reads a CPU quantity as Validate accepts it, in millicores.
func MilliCPU(q string) (int64, error) {
	if !cpuQty.MatchString(q) {
		return 0, fmt.Errorf("CPU %q: want cores (1, 0.5) or millicores (500m)", q)
	}
	if m, ok := strings.CutSuffix(q, "m"); ok {
		return strconv.ParseInt(m, 10, 64)
	}
	f, err := strconv.ParseFloat(q, 64)
	return int64(f*1000 + 0.5), err
}

// Bytes reads a memory quantity as Validate accepts it.
func Bytes(q string) (float64, error) {
	m := memQty.FindStringSubmatch(q)
	if m == nil {
		return 0, fmt.Errorf("memory %q: want bytes with a unit, such as 256Mi", q)
	}
	n, err := strconv.ParseFloat(strings.TrimSuffix(q, m[2]), 64)
	mult := map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[m[2]]
	return n * mult, err
}

// q quotes s as a YAML double-quoted scalar: JSON's quoting, which YAML's
// double-quoted style reads the same, unicode left as it is.
func q(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// YAML renders the Job as one YAML document, comments included (they
// say why each setting is so). Validate it first: YAML renders what it
// is given.
func (j Job) YAML() []byte {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	j.writeObjects(w)
	w("# One schedule sent by %d generators: an Indexed Job whose pod k runs", j.Shards)
	w("# shard k of %d (k read from %s, which the Job sets in", j.Shards, IndexEnv)
	w("# every pod), all starting at one instant (%s), so that their", StartEnv)
	w("# arrivals interleave as one generator's would. Each shard writes its")
	w("# JSON result to stdout, where `kubectl logs` finds it; 'openload")
	w("# merge' adds the results (deploy/README.md).")
	w("#")
	w("# Rendered by `openload k8s manifest`, the Job `openload k8s run`")
	w("# creates: change its flags, not this text (N is in three places).")
	if j.StartAt == StartPlaceholder {
		w("# Replace %s on apply by a time far enough ahead for every", StartPlaceholder)
		w("# pod to be running by then; a pod that starts late is not shifted:")
		w("# its first arrivals' send delay shows how late.")
	}
	w("apiVersion: batch/v1")
	w("kind: Job")
	w("metadata:")
	w("  name: %s", j.Name)
	if j.Namespace != "" {
		w("  namespace: %s", j.Namespace)
	}
	w("  labels:")
	w("    app.kubernetes.io/name: %s", AppName)
	w("    %s: %s", LabelRun, j.Name)
	if j.Planned > 0 {
		w("  annotations:")
		w("    # The schedule's length from its start: 'openload k8s status' says")
		w("    # how far the run is.")
		w("    %s: %s", AnnotationPlanned, q(j.Planned.String()))
	}
	w("spec:")
	w("  completionMode: Indexed")
	w("  completions: %d", j.Shards)
	w("  parallelism: %d # every shard at once", j.Shards)
	w("  # A retried shard would start after the shared start, late: fail its")
	w("  # index instead, let the other shards finish, and let merge name what")
	w("  # is missing.")
	w("  backoffLimitPerIndex: 0")
	w("  maxFailedIndexes: %d", j.Shards)
	if j.Deadline > 0 {
		w("  # Past the start, the run and a grace, the cluster stops the Job")
		w("  # even if no one is left to delete it.")
		w("  activeDeadlineSeconds: %d", int64((j.Deadline+time.Second-1)/time.Second))
	}
	w("  template:")
	w("    metadata:")
	w("      labels:")
	w("        app.kubernetes.io/name: %s", AppName)
	w("        %s: %s", LabelRun, j.Name)
	for _, p := range pairs(j.PodLabels, true) {
		w("        %s: %s", q(p.Key), q(p.Value))
	}
	if j.MetricsPort > 0 {
		w("      # For a Prometheus that discovers pods by annotation; podmonitor.yaml")
		w("      # is the Prometheus Operator's equivalent. Every shard serves its own")
		w("      # series (shard label i/N, run label shared): sum over shards in")
		w("      # PromQL, see README.md.")
	}
	if j.MetricsPort > 0 || len(j.PodAnnotations) > 0 {
		w("      annotations:")
	}
	if j.MetricsPort > 0 {
		w("        prometheus.io/scrape: \"true\"")
		w("        prometheus.io/port: \"%d\"", j.MetricsPort)
		w("        prometheus.io/path: /metrics")
	}
	for _, p := range pairs(j.PodAnnotations, false) {
		w("        %s: %s", q(p.Key), q(p.Value))
	}
	w("    spec:")
	w("      restartPolicy: Never")
	j.writePlacement(w)
	w("      securityContext:")
	w("        runAsNonRoot: true")
	w("        runAsUser: 65532")
	w("        seccompProfile:")
	w("          type: RuntimeDefault")
	w("      containers:")
	w("        - name: %s", Container)
	w("          image: %s", q(j.Image))
	if policy, why := j.ImagePolicy(); policy != "" {
		if why != "" {
			w("          # %s", why)
		}
		w("          imagePullPolicy: %s", policy)
	}
	w("          env:")
	w("            - name: %s", StartEnv)
	w("              value: %s", q(j.StartAt))
	for _, e := range j.SecretEnv {
		w("            - name: %s", e.Name)
		w("              valueFrom:")
		w("                secretKeyRef:")
		w("                  name: %s", j.SecretName())
		w("                  key: %s", e.Key)
	}
	w("          args:")
	for _, a := range j.Args {
		w("            - %s", q(a))
	}
	if j.MetricsPort > 0 {
		w("          ports:")
		w("            - name: metrics")
		w("              containerPort: %d", j.MetricsPort)
	}
	w("          resources:")
	w("            # The CPU a shard is sure of (deploy/README.md: what a shard")
	w("            # needs); no CPU limit, since a throttled generator sends late.")
	w("            requests:")
	w("              cpu: %s", q(j.CPU))
	w("              memory: %s", q(j.Memory))
	if j.MemoryLimit != "" {
		w("            limits:")
		w("              memory: %s", q(j.MemoryLimit))
	}
	barrier := j.StartAt == StartBarrier
	if barrier || j.hasFiles(false) || j.hasFiles(true) {
		w("          volumeMounts:")
		if barrier {
			j.barrierMount(w)
		}
		if j.hasFiles(false) {
			w("            - name: files")
			w("              mountPath: %s", FilesDir)
			w("              readOnly: true")
		}
		if j.hasFiles(true) {
			w("            - name: secret-files")
			w("              mountPath: %s", SecretDir)
			w("              readOnly: true")
		}
	}
	w("          securityContext:")
	w("            allowPrivilegeEscalation: false")
	w("            readOnlyRootFilesystem: true")
	w("            capabilities:")
	w("              drop: [\"ALL\"]")
	if barrier || j.hasFiles(false) || j.hasFiles(true) {
		w("      volumes:")
		if barrier {
			j.barrierVolume(w)
		}
		if j.hasFiles(false) {
			w("        - name: files")
			w("          configMap:")
			w("            name: %s", j.ConfigMapName())
		}
		if j.hasFiles(true) {
			// Only the files: the headers' values stay variables.
			w("        - name: secret-files")
			w("          secret:")
			w("            secretName: %s", j.SecretName())
			w("            items:")
			for _, f := range j.Files {
				if f.Secret {
					w("              - key: %s", f.Key)
					w("                path: %s", f.Key)
				}
			}
		}
	}
	return []byte(b.String())
}
