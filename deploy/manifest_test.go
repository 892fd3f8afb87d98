// Package deploy holds the test of openload's deployment files: the
// Kubernetes manifests in kubernetes/ and the Dockerfile. It is a module
// of its own so that the Kubernetes API types stay out of openload's
// dependencies; .ci/run tests it.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifests are the decoded objects of kubernetes/*.yaml, by kind.
type manifests struct {
	jobs        []*batchv1.Job
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	pods        []*corev1.Pod
	claims      []*corev1.PersistentVolumeClaim
	podMonitors []*podMonitor
	configMaps  []*corev1.ConfigMap
	secrets     []*corev1.Secret
	roles       []*rbacv1.Role
	bindings    []*rbacv1.RoleBinding
	accounts    []*corev1.ServiceAccount
}

// documents splits a multi-document YAML file on its "---" lines.
func documents(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// decode decodes one document strictly (an unknown or duplicated field is
// an error) into the API type its kind names.
func (m *manifests) decode(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	strict := func(v any) error { return yaml.UnmarshalStrict(doc, v) }
	switch tm.APIVersion + " " + tm.Kind {
	case "batch/v1 Job":
		var o batchv1.Job
		m.jobs = append(m.jobs, &o)
		return strict(&o)
	case "apps/v1 Deployment":
		var o appsv1.Deployment
		m.deployments = append(m.deployments, &o)
		return strict(&o)
	case "v1 Service":
		var o corev1.Service
		m.services = append(m.services, &o)
		return strict(&o)
	case "v1 Pod":
		var o corev1.Pod
		m.pods = append(m.pods, &o)
		return strict(&o)
	case "monitoring.coreos.com/v1 PodMonitor":
		var o podMonitor
		m.podMonitors = append(m.podMonitors, &o)
		return strict(&o)
	case "v1 ConfigMap":
		var o corev1.ConfigMap
		m.configMaps = append(m.configMaps, &o)
		return strict(&o)
	case "v1 Secret":
		var o corev1.Secret
		m.secrets = append(m.secrets, &o)
		return strict(&o)
	case "v1 ServiceAccount":
		var o corev1.ServiceAccount
		m.accounts = append(m.accounts, &o)
		return strict(&o)
	case "rbac.authorization.k8s.io/v1 Role":
		var o rbacv1.Role
		m.roles = append(m.roles, &o)
		return strict(&o)
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		var o rbacv1.RoleBinding
		m.bindings = append(m.bindings, &o)
		return strict(&o)
	case "v1 PersistentVolumeClaim":
		var o corev1.PersistentVolumeClaim
		m.claims = append(m.claims, &o)
		return strict(&o)
	}
	return fmt.Errorf("unexpected kind %q %q", tm.APIVersion, tm.Kind)
}

func load(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	m := &manifests{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue // kustomize's, not the cluster's (TestKustomize)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m.decodeAll(t, f, b)
	}
	return m
}

// decodeAll decodes every document of b, from name, strictly.
func (m *manifests) decodeAll(t *testing.T, name string, b []byte) {
	t.Helper()
	for i, doc := range documents(b) {
		if err := m.decode(doc); err != nil {
			t.Fatalf("%s, document %d: %v", name, i+1, err)
		}
	}
}

var shardArg = regexp.MustCompile(`^--shard-from-env=JOB_COMPLETION_INDEX/(\d+)$`)

// checkJob checks what makes the Job run one schedule split N ways: an
// indexed Job, every shard at once (parallelism = completions = N), the
// shard index from the Job's index, N in --shard-from-env, one shared
// --start-at, the file named by the index, no retry (a retried shard
// would start late).
func checkJob(j *batchv1.Job) error {
	s := j.Spec
	switch {
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		return fmt.Errorf("job %s: completionMode must be Indexed", j.Name)
	case s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 1:
		return fmt.Errorf("job %s: parallelism must equal completions (every shard runs at once)", j.Name)
	case s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0:
		return fmt.Errorf("job %s: backoffLimitPerIndex must be 0: a retried shard starts after --start-at", j.Name)
	case s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		return fmt.Errorf("job %s: restartPolicy must be Never", j.Name)
	}
	n := int(*s.Completions)
	if len(s.Template.Spec.Containers) != 1 {
		return fmt.Errorf("job %s: want one container, got %d", j.Name, len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	var shards []string
	for _, a := range c.Args {
		if m := shardArg.FindStringSubmatch(a); m != nil {
			shards = append(shards, m[1])
		}
		if strings.HasPrefix(a, "--shard=") || a == "--shard" {
			return fmt.Errorf("job %s: a fixed --shard: every pod would send the same shard", j.Name)
		}
	}
	if len(shards) != 1 || shards[0] != strconv.Itoa(n) {
		return fmt.Errorf("job %s: want one --shard-from-env=JOB_COMPLETION_INDEX/%d (N = completions), got %v in %q", j.Name, n, shards, c.Args)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if !slices.Contains(c.Args, "--start-at=$(START_AT)") || env["START_AT"].Value == "" {
		return fmt.Errorf("job %s: want --start-at=$(START_AT) with START_AT set in env", j.Name)
	}
	// The result goes to stdout, for kubectl logs, or to a file named by
	// the shard's index.
	out := argValue(c.Args, "output")
	switch {
	case out == "-":
	case strings.Contains(out, "$(SHARD_INDEX)"):
		idx := env["SHARD_INDEX"].ValueFrom
		if idx == nil || idx.FieldRef == nil || idx.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			return fmt.Errorf("job %s: SHARD_INDEX must come from the completion-index annotation", j.Name)
		}
	default:
		return fmt.Errorf("job %s: --output %q: want - (stdout, for kubectl logs) or a file named by $(SHARD_INDEX)", j.Name, out)
	}
	if !slices.Contains(c.Args, "--quiet") {
		return fmt.Errorf("job %s: want --quiet: the log holds the result, not the report", j.Name)
	}
	return nil
}

// checkPod checks a pod spec for requests and against privileges: every
// container requests CPU and memory, runs as non-root without privilege
// escalation, with all capabilities dropped and none added; the pod uses
// no host namespace and no host path.
func checkPod(name string, p corev1.PodSpec) error {
	if p.HostNetwork || p.HostPID || p.HostIPC {
		return fmt.Errorf("%s: uses a host namespace", name)
	}
	for _, v := range p.Volumes {
		if v.HostPath != nil {
			return fmt.Errorf("%s: volume %s is a hostPath", name, v.Name)
		}
	}
	podNonRoot := p.SecurityContext != nil && p.SecurityContext.RunAsNonRoot != nil && *p.SecurityContext.RunAsNonRoot
	for _, c := range append(slices.Clone(p.InitContainers), p.Containers...) {
		r := c.Resources.Requests
		if r.Cpu().IsZero() || r.Memory().IsZero() {
			return fmt.Errorf("%s: container %s must request cpu and memory", name, c.Name)
		}
		sc := c.SecurityContext
		switch {
		case sc == nil:
			return fmt.Errorf("%s: container %s has no securityContext", name, c.Name)
		case sc.Privileged != nil && *sc.Privileged:
			return fmt.Errorf("%s: container %s is privileged", name, c.Name)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			return fmt.Errorf("%s: container %s must set allowPrivilegeEscalation: false", name, c.Name)
		case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
			return fmt.Errorf("%s: container %s must drop ALL capabilities and add none", name, c.Name)
		case !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot):
			return fmt.Errorf("%s: container %s may run as root", name, c.Name)
		}
	}
	return nil
}

func TestManifests(t *testing.T) {
	m := load(t)
	j := checkSet(t, "kubernetes/*.yaml", m)
	t.Logf("job %s: completionMode %s, completions = parallelism = %d, args %q", j.Name, *j.Spec.CompletionMode, *j.Spec.Completions, j.Spec.Template.Spec.Containers[0].Args)
	if got := argValue(j.Spec.Template.Spec.Containers[0].Args, "output"); got != "-" {
		t.Errorf("job.yaml writes its result to %q: want - (stdout), for kubectl logs without a shared volume", got)
	}
}

// checkSet checks one set of manifests, as applied together: one Job,
// one Deployment (the stub) and its Service, which the Job aims at;
// every pod spec (checkPod); every claim a pod mounts defined. It
// returns the Job.
func checkSet(t *testing.T, name string, m *manifests) *batchv1.Job {
	t.Helper()
	if len(m.jobs) != 1 || len(m.deployments) != 1 || len(m.services) != 1 {
		t.Fatalf("%s: want one Job, one Deployment and one Service: %d, %d, %d", name, len(m.jobs), len(m.deployments), len(m.services))
	}
	j := m.jobs[0]
	if err := checkJob(j); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	pods := map[string]corev1.PodSpec{"job " + j.Name: j.Spec.Template.Spec}
	for _, d := range m.deployments {
		pods["deployment "+d.Name] = d.Spec.Template.Spec
	}
	for _, p := range m.pods {
		pods["pod "+p.Name] = p.Spec
	}
	for pn, p := range pods {
		if err := checkPod(pn, p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	t.Logf("%s: %d pod specs: requests set, non-root, no privilege escalation, capabilities dropped, no host namespaces or paths", name, len(pods))

	// The stub's Service selects the Deployment and is what the Job aims at.
	d, svc := m.deployments[0], m.services[0]
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: service %s selects %s=%s, which deployment %s's pods lack", name, svc.Name, k, v, d.Name)
		}
	}
	url := j.Spec.Template.Spec.Containers[0].Args[len(j.Spec.Template.Spec.Containers[0].Args)-1]
	want := fmt.Sprintf("http://%s:%d/", svc.Name, svc.Spec.Ports[0].Port)
	if !strings.HasPrefix(url, want) {
		t.Errorf("%s: the job aims at %s, not the stub's service %s", name, url, want)
	}
	// Every volume claim the pods mount is defined here.
	claims := map[string]bool{}
	for _, c := range m.claims {
		claims[c.Name] = true
	}
	for pn, p := range pods {
		for _, v := range p.Volumes {
			if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
				t.Errorf("%s: %s mounts claim %s, which no manifest defines", name, pn, v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
	return j
}

// kustomize is `kubectl kustomize dir`, decoded strictly: kubectl's own
// kustomize is the judge of the overlays. Without kubectl the test is
// skipped, and fails where OPENLOAD_INTEROP is set (.ci/run: the
// project's machines have kubectl).
func kustomize(t *testing.T, dir string) *manifests {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("OPENLOAD_INTEROP") != "" {
			t.Fatalf("kubectl not found, which has kustomize built in (OPENLOAD_INTEROP is set): %v", err)
		}
		t.Skipf("kubectl not found, which has kustomize built in: %v", err)
	}
	out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	m := &manifests{}
	m.decodeAll(t, "kubectl kustomize "+dir, out)
	return m
}

// cpuOf is the CPU a pod spec's first container requests.
func cpuOf(p corev1.PodSpec) string {
	return p.Containers[0].Resources.Requests.Cpu().String()
}

// TestKustomize: the base and each overlay render (kubectl kustomize)
// into manifests that pass the same checks; the small overlay asks a
// quarter core per shard and for the stub, changing nothing else; the
// shared-volume overlay writes each shard's file to a claim it defines,
// with the fsGroup that makes the volume writable by the image's user.
func TestKustomize(t *testing.T) {
	base := kustomize(t, "kubernetes")
	j := checkSet(t, "base", base)
	plain := load(t).jobs[0]
	if !reflect.DeepEqual(j.Spec, plain.Spec) {
		t.Errorf("the base's Job differs from job.yaml's")
	}

	small := kustomize(t, "overlays/small")
	sj := checkSet(t, "overlays/small", small)
	if got := cpuOf(sj.Spec.Template.Spec); got != "250m" {
		t.Errorf("overlays/small: a shard requests cpu %s, want 250m", got)
	}
	if got := cpuOf(small.deployments[0].Spec.Template.Spec); got != "250m" {
		t.Errorf("overlays/small: the stub requests cpu %s, want 250m", got)
	}
	sj.Spec.Template.Spec.Containers[0].Resources.Requests = j.Spec.Template.Spec.Containers[0].Resources.Requests
	if !reflect.DeepEqual(sj.Spec, j.Spec) {
		t.Errorf("overlays/small changes more of the Job than its CPU request")
	}

	shared := kustomize(t, "overlays/shared-volume")
	vj := checkSet(t, "overlays/shared-volume", shared)
	c := vj.Spec.Template.Spec.Containers[0]
	if got := argValue(c.Args, "output"); got != "/results/shard-$(SHARD_INDEX).json" {
		t.Errorf("overlays/shared-volume: --output %q", got)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/results" || len(shared.claims) != 1 || len(shared.pods) != 1 {
		t.Errorf("overlays/shared-volume: mounts %+v, claims %d, pods %d", c.VolumeMounts, len(shared.claims), len(shared.pods))
	}
	if sc := vj.Spec.Template.Spec.SecurityContext; sc.FSGroup == nil || *sc.FSGroup != *sc.RunAsUser {
		t.Errorf("overlays/shared-volume: fsGroup %v, want the user %v: the volume must be writable by it", sc.FSGroup, *sc.RunAsUser)
	}
	if m := shared.claims[0].Spec.AccessModes; !slices.Contains(m, corev1.ReadWriteMany) {
		t.Errorf("overlays/shared-volume: claim access modes %v: pods on several nodes need ReadWriteMany", m)
	}
}

// decodeFile decodes the manifests of one testdata file strictly.
func decodeFile(t *testing.T, path string) (*manifests, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{}
	m.decodeAll(t, path, b)
	return m, b
}

// runnerJob is the one Job of a testdata file the runner rendered, with
// the checks every Job and pod of the project passes applied.
func runnerJob(t *testing.T, path string) *batchv1.Job {
	t.Helper()
	m, _ := decodeFile(t, path)
	if len(m.jobs) != 1 {
		t.Fatalf("%s: want one Job, got %d", path, len(m.jobs))
	}
	j := m.jobs[0]
	if err := checkJob(j); err != nil {
		t.Error(err)
	}
	if err := checkPod("job "+j.Name, j.Spec.Template.Spec); err != nil {
		t.Error(err)
	}
	return j
}

// TestRunnerJob: the Job `openload k8s run` creates (written by the
// main module's TestK8sRun as testdata/job-run.yaml, its start made
// fixed) decodes strictly as a batch/v1 Job and passes the Job's checks;
// its pods have a deadline, the start in START_AT, and the run's flags
// exactly as typed, quotes included.
func TestRunnerJob(t *testing.T) {
	j := runnerJob(t, "testdata/job-run.yaml")
	if d := j.Spec.ActiveDeadlineSeconds; d == nil || *d <= 0 {
		t.Errorf("activeDeadlineSeconds %v: a run's Job must end even if its runner is gone", d)
	}
	c := j.Spec.Template.Spec.Containers[0]
	if _, err := time.Parse(time.RFC3339, c.Env[0].Value); c.Env[0].Name != "START_AT" || err != nil {
		t.Errorf("env %+v: want START_AT an RFC 3339 time", c.Env)
	}
	if !slices.Contains(c.Args, `--header=X-Run: it's "one"`) {
		t.Errorf("args %q lack the header as typed", c.Args)
	}
	if aff := j.Spec.Template.Spec.Affinity; aff == nil || aff.PodAntiAffinity == nil ||
		aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels["batch.kubernetes.io/job-name"] != j.Name {
		t.Errorf("the shards are not spread over the nodes by their Job's name")
	}
}

// TestBarrierJob: the Job `openload k8s run` creates without --lead
// (written by the main module's TestK8sRunBarrier) decodes strictly; its
// shards wait on START_AT's file, the downward API projection of their
// start annotation, mounted read-only.
func TestBarrierJob(t *testing.T) {
	ps := runnerJob(t, "testdata/job-barrier.yaml").Spec.Template.Spec
	c := ps.Containers[0]
	if c.Env[0].Name != "START_AT" || c.Env[0].Value != "@/etc/openload/start/at" {
		t.Errorf("env %+v: want START_AT the start file", c.Env)
	}
	if len(ps.Volumes) != 1 || ps.Volumes[0].DownwardAPI == nil || len(ps.Volumes[0].DownwardAPI.Items) != 1 ||
		ps.Volumes[0].DownwardAPI.Items[0].Path != "at" || ps.Volumes[0].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations['openload/start-at']" {
		t.Errorf("volumes %+v: want the start annotation's downward API file", ps.Volumes)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != ps.Volumes[0].Name || c.VolumeMounts[0].MountPath != "/etc/openload/start" || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
}

// TestChecksRefuse: the checks above can fail: a strict decode refuses
// an unknown field, and each changed field of the Job or a pod is caught.
func TestChecksRefuse(t *testing.T) {
	var m manifests
	bad := []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMode: Indexed\n  parallelism: 2\n  paralellism: 2\n")
	if err := m.decode(bad); err == nil {
		t.Error("a misspelt field decoded")
	}
	for _, c := range []struct {
		name   string
		mutate func(j *batchv1.Job)
	}{
		{"parallelism ≠ completions", func(j *batchv1.Job) { p := *j.Spec.Parallelism - 1; j.Spec.Parallelism = &p }},
		{"not indexed", func(j *batchv1.Job) { nc := batchv1.NonIndexedCompletion; j.Spec.CompletionMode = &nc }},
		{"N in the argument ≠ completions", func(j *batchv1.Job) {
			n := *j.Spec.Completions + 1
			j.Spec.Completions, j.Spec.Parallelism = &n, &n
		}},
		{"no --start-at", func(j *batchv1.Job) {
			c := &j.Spec.Template.Spec.Containers[0]
			c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--start-at") })
		}},
		{"retries", func(j *batchv1.Job) { b := int32(2); j.Spec.BackoffLimitPerIndex = &b }},
		{"one file for every shard", func(j *batchv1.Job) {
			c := &j.Spec.Template.Spec.Containers[0]
			c.Args[slices.Index(c.Args, "--output=-")] = "--output=/results/shard.json"
		}},
	} {
		j := load(t).jobs[0]
		c.mutate(j)
		if err := checkJob(j); err == nil {
			t.Errorf("%s: checkJob passed", c.name)
		}
	}
	for _, c := range []struct {
		name   string
		mutate func(p *corev1.PodSpec)
	}{
		{"privileged", func(p *corev1.PodSpec) { t := true; p.Containers[0].SecurityContext.Privileged = &t }},
		{"no requests", func(p *corev1.PodSpec) { p.Containers[0].Resources.Requests = nil }},
		{"host network", func(p *corev1.PodSpec) { p.HostNetwork = true }},
		{"capability added", func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
		}},
	} {
		p := load(t).jobs[0].Spec.Template.Spec
		c.mutate(&p)
		if err := checkPod("job", p); err == nil {
			t.Errorf("%s: checkPod passed", c.name)
		}
	}
}

// TestDockerfile: the image is a static binary on a base with nothing
// else (distroless static or scratch), running as non-root.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := strings.Fields(string(l)); len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			froms = append(froms, f[1])
		}
	}
	if len(froms) < 2 {
		t.Fatalf("want a build stage and a final stage, got FROM %v", froms)
	}
	final := froms[len(froms)-1]
	if final != "scratch" && !strings.HasPrefix(final, "gcr.io/distroless/static") {
		t.Errorf("final stage FROM %s: want scratch or distroless static", final)
	}
	for _, want := range []string{"CGO_ENABLED=0", "USER nonroot", "ENTRYPOINT [\"/openload\"]"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
}
