package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// kubectlCall is one kubectl call of the runner, as its source writes it.
type kubectlCall struct {
	where string   // file:line
	args  []string // its string literals, in order: the verb first
}

// runnerCalls finds every kubectl call in the runner's source: each
// call of the run method of a value of the kubectl type, whose
// arguments after the context and stdin are string literals up to the
// resource. A call it cannot read fails the test, so none is missed.
func runnerCalls(t *testing.T) []kubectlCall {
	t.Helper()
	files, _ := filepath.Glob("../cmd/openload/k8s*.go")
	more, _ := filepath.Glob("../internal/kube/*.go")
	files = append(files, more...)
	// A value of the kubectl type: a variable, a parameter or a field,
	// declared in any of the files (a method in one file calls a field
	// declared in another).
	decl := regexp.MustCompile(`(?m)\b(\w+)\s*(?::=\s*kubectl\{|\s+kubectl[,)]|\s+kubectl\s*(?://.*)?$)`)
	lit := regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	srcs := map[string]string{}
	names := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = string(b)
		for _, m := range decl.FindAllStringSubmatchIndex(string(b), -1) {
			if strings.HasSuffix(string(b[:m[0]]), "func (") {
				continue // a method's receiver: its calls are the callers'
			}
			names[string(b[m[2]:m[3]])] = true
		}
	}
	var calls []kubectlCall
	for _, f := range slices.Sorted(maps.Keys(srcs)) {
		src := srcs[f]
		for name := range names {
			call := regexp.MustCompile(`\b` + name + `\.run\(`)
			for _, loc := range call.FindAllStringIndex(src, -1) {
				line := src[loc[1]:]
				line = line[:strings.IndexByte(line, '\n')]
				where := f + ":" + itoa(strings.Count(src[:loc[0]], "\n")+1)
				// ctx, stdin, then the arguments
				parts := strings.SplitN(line, ",", 3)
				if len(parts) < 3 {
					t.Errorf("%s: cannot read the kubectl call %q", where, line)
					continue
				}
				var args []string
				for _, a := range splitArgs(parts[2]) {
					m := lit.FindStringSubmatch(strings.TrimSpace(a))
					if m == nil || !strings.HasPrefix(strings.TrimSpace(a), `"`) {
						args = append(args, "?") // a value: a name, a label
						continue
					}
					args = append(args, m[1])
				}
				calls = append(calls, kubectlCall{where, args})
			}
		}
	}
	return calls
}

func itoa(n int) string { return strconv.Itoa(n) }

// splitArgs splits a call's arguments at the commas outside string
// literals ("job,configmap,secret" is one).
func splitArgs(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// resources are kubectl's words for a resource, as the Role names it.
var resources = map[string][2]string{ // group, resource
	"job": {"batch", "jobs"}, "jobs": {"batch", "jobs"},
	"pod": {"", "pods"}, "pods": {"", "pods"},
	"configmap": {"", "configmaps"}, "configmaps": {"", "configmaps"},
	"secret": {"", "secrets"}, "secrets": {"", "secrets"},
}

// created are the kinds `create -f -` creates: those of the stream the
// runner renders with files and credentials (testdata/job-files.yaml).
func created(t *testing.T) []string {
	b, err := os.ReadFile("testdata/job-files.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^kind: (\w+)$`).FindAllStringSubmatch(string(b), -1) {
		out = append(out, strings.ToLower(m[1]))
	}
	return out
}

// needs is what a call needs of the Role: group/resource → verbs.
func needs(t *testing.T, c kubectlCall) map[[2]string][]string {
	need := map[[2]string][]string{}
	add := func(word string, verbs ...string) {
		r, ok := resources[word]
		if !ok {
			t.Errorf("%s: kubectl %q: resource %q is not in this test's table: add it, and to runner-role.yaml", c.where, c.args, word)
			return
		}
		need[r] = append(need[r], verbs...)
	}
	byLabel := slices.Contains(c.args, "-l") || slices.Contains(c.args, "--selector")
	switch verb := c.args[0]; verb {
	case "create":
		for _, k := range created(t) {
			add(k, "create")
		}
	case "get", "delete":
		if verb == "get" && len(c.args) > 1 && c.args[1] == "--raw" {
			// get --raw /api/v1/namespaces/NS/pods/POD:PORT/proxy/…, the
			// only raw path the runner reads (k8sprogress.go).
			need[[2]string{"", "pods/proxy"}] = []string{"get"}
			return need
		}
		if len(c.args) < 2 || c.args[1] == "?" {
			t.Errorf("%s: kubectl %q: write the resource as a literal, so that the Role can be checked", c.where, c.args)
			return need
		}
		for _, word := range strings.Split(c.args[1], ",") {
			switch {
			case verb == "get" && byLabel:
				add(word, "list")
			case verb == "get":
				add(word, "get")
			case byLabel:
				add(word, "list", "delete")
			default:
				add(word, "delete")
			}
		}
	case "logs":
		add("pods", "get")
		need[[2]string{"", "pods/log"}] = []string{"get"}
	case "annotate": // annotate RESOURCE -l …: a list, then a patch of each
		add(c.args[1], "list", "patch")
	default:
		t.Errorf("%s: kubectl %s: a verb this test does not know: add what it needs here and to runner-role.yaml", c.where, verb)
	}
	return need
}

// TestRunnerRole: kubernetes/runner-role.yaml grants every kubectl call
// the runner makes (read from its source) and nothing it does not use.
func TestRunnerRole(t *testing.T) {
	b, err := os.ReadFile("kubernetes/runner-role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{}
	m.decodeAll(t, "kubernetes/runner-role.yaml", b)
	if len(m.roles) != 1 || len(m.bindings) != 1 || len(m.accounts) != 1 {
		t.Fatalf("want one Role, RoleBinding and ServiceAccount: %d, %d, %d", len(m.roles), len(m.bindings), len(m.accounts))
	}
	role, rb := m.roles[0], m.bindings[0]
	if rb.RoleRef.Name != role.Name || rb.Subjects[0].Name != m.accounts[0].Name || rb.Subjects[0].Namespace == "" {
		t.Errorf("the binding binds %s to %s in %q (a ServiceAccount subject needs its namespace)", rb.RoleRef.Name, rb.Subjects[0].Name, rb.Subjects[0].Namespace)
	}
	calls := runnerCalls(t)
	if len(calls) == 0 {
		t.Fatal("no kubectl call found in the runner's source")
	}
	for _, c := range calls {
		t.Logf("%s: kubectl %s", c.where, strings.Join(c.args, " "))
	}
	for _, gap := range roleGaps(t, role, calls) {
		t.Error(gap)
	}
	// The check can fail: each verb taken away is missed.
	for i := range role.Rules {
		for j := range role.Rules[i].Verbs {
			less := role.DeepCopy()
			less.Rules[i].Verbs = slices.Delete(slices.Clone(less.Rules[i].Verbs), j, j+1)
			if len(roleGaps(t, less, calls)) == 0 {
				t.Errorf("without %s on %v, the Role still passes", role.Rules[i].Verbs[j], role.Rules[i].Resources)
			}
		}
	}
}

// roleGaps says what the calls need that role does not grant, and what
// it grants that no call uses.
func roleGaps(t *testing.T, role *rbacv1.Role, calls []kubectlCall) []string {
	var gaps []string
	granted := map[[2]string]map[string]bool{}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				k := [2]string{g, res}
				if granted[k] == nil {
					granted[k] = map[string]bool{}
				}
				for _, v := range r.Verbs {
					granted[k][v] = true
				}
			}
		}
	}
	used := map[[2]string]map[string]bool{}
	for _, c := range calls {
		for r, verbs := range needs(t, c) {
			for _, v := range verbs {
				if !granted[r][v] {
					gaps = append(gaps, fmt.Sprintf("%s: kubectl %q needs %s on %s/%s, which the Role does not grant", c.where, c.args, v, r[0], r[1]))
				}
				if used[r] == nil {
					used[r] = map[string]bool{}
				}
				used[r][v] = true
			}
		}
	}
	for r, verbs := range granted {
		for v := range verbs {
			if !used[r][v] {
				gaps = append(gaps, fmt.Sprintf("the Role grants %s on %s/%s, which no call uses", v, r[0], r[1]))
			}
		}
	}

	return gaps
}

// TestRunnerFiles: the stream `k8s manifest` renders with files and
// credential headers (the main module's TestK8sFiles writes it) decodes
// strictly: a ConfigMap and a Secret labelled with the run, then the
// Job, whose pods mount the ConfigMap read-only, take each credential
// from the Secret by name, and hold none of its values.
func TestRunnerFiles(t *testing.T) {
	m, jy := decodeFile(t, "testdata/job-files.yaml")
	if len(m.configMaps) != 1 || len(m.secrets) != 1 || len(m.jobs) != 1 {
		t.Fatalf("want a ConfigMap, a Secret and a Job: %d, %d, %d", len(m.configMaps), len(m.secrets), len(m.jobs))
	}
	j, cm, sec := m.jobs[0], m.configMaps[0], m.secrets[0]
	if err := checkJob(j); err != nil {
		t.Error(err)
	}
	if err := checkPod("job "+j.Name, j.Spec.Template.Spec); err != nil {
		t.Error(err)
	}
	for _, o := range []map[string]string{cm.Labels, sec.Labels, j.Labels, j.Spec.Template.Labels} {
		if o["openload.dev/run"] != j.Name {
			t.Errorf("labels %v lack openload.dev/run=%s", o, j.Name)
		}
	}
	c := j.Spec.Template.Spec.Containers[0]
	vols := j.Spec.Template.Spec.Volumes
	if len(vols) != 1 || vols[0].ConfigMap == nil || vols[0].ConfigMap.Name != cm.Name || len(c.VolumeMounts) != 1 || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("volumes %+v, mounts %+v: want the ConfigMap mounted read-only", vols, c.VolumeMounts)
	}
	for key := range cm.Data {
		if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasSuffix(a, "="+c.VolumeMounts[0].MountPath+"/"+key) }) {
			t.Errorf("no argument names %s/%s: %q", c.VolumeMounts[0].MountPath, key, c.Args)
		}
	}
	refs := 0
	for _, e := range c.Env {
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			refs++
			if r.SecretKeyRef.Name != sec.Name || sec.Data[r.SecretKeyRef.Key] == nil {
				t.Errorf("env %s: key %s of %s, which the Secret lacks", e.Name, r.SecretKeyRef.Key, r.SecretKeyRef.Name)
			}
			if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "$("+e.Name+")") }) {
				t.Errorf("env %s: no argument names it", e.Name)
			}
		}
	}
	if refs != len(sec.Data) {
		t.Errorf("%d variables from the Secret, which holds %d values", refs, len(sec.Data))
	}
	job := string(jy)[strings.LastIndex(string(jy), "\n---\n"):]
	for k, v := range sec.Data {
		if strings.Contains(job, string(v)) {
			t.Errorf("the Job holds the value of %s", k)
		}
	}
}

// TestRunnerPlacement: the placement flags' Job (TestK8sPlacement's)
// decodes strictly into the fields Kubernetes reads.
func TestRunnerPlacement(t *testing.T) {
	j := runnerJob(t, "testdata/job-placement.yaml")
	p := j.Spec.Template.Spec
	tol := p.Tolerations
	switch {
	case p.NodeSelector["pool"] != "load" || p.NodeSelector["kubernetes.io/arch"] != "amd64":
		t.Errorf("nodeSelector %v", p.NodeSelector)
	case len(tol) != 2 || tol[0].Key != "dedicated" || tol[0].Operator != "Equal" || tol[0].Value != "load" || tol[0].Effect != "NoSchedule" ||
		tol[1].Key != "spot" || tol[1].Operator != "Exists" || tol[1].Effect != "PreferNoSchedule":
		t.Errorf("tolerations %+v", tol)
	case p.Affinity == nil || len(p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" ||
		p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels["batch.kubernetes.io/job-name"] != j.Name:
		t.Errorf("affinity %+v: want one shard a node, by the job-name label", p.Affinity)
	case len(p.ImagePullSecrets) != 1 || p.ImagePullSecrets[0].Name != "regcred" || p.ServiceAccountName != "openload-runner" || p.PriorityClassName != "batch-low":
		t.Errorf("pull secrets %v, service account %q, priority %q", p.ImagePullSecrets, p.ServiceAccountName, p.PriorityClassName)
	case j.Spec.Template.Labels["team"] != "perf" || j.Spec.Template.Annotations["example.com/note"] != "a run, with commas":
		t.Errorf("labels %v, annotations %v", j.Spec.Template.Labels, j.Spec.Template.Annotations)
	}
}
