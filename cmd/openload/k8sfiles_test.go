package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/kube"
)

// k8sDocs splits a rendered stream into its documents, by kind.
func k8sDocs(t *testing.T, stream string) map[string]string {
	t.Helper()
	docs := map[string]string{}
	for _, d := range regexp.MustCompile(`(?m)^---$`).Split(stream, -1) {
		var m struct{ Kind string }
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("%v in\n%s", err, d)
		}
		if _, dup := docs[m.Kind]; dup {
			t.Fatalf("two %s documents", m.Kind)
		}
		docs[m.Kind] = d
	}
	return docs
}

// TestK8sFiles: the files a run reads travel with its Job: a ConfigMap
// holds the targets and values files, the pods read them where the Job
// mounts it; the credential headers (Authorization always, X-Tenant by
// --redact) go into a Secret and reach the pods' arguments as $(VAR),
// their values nowhere in the Job; a targets file naming a credential
// header goes into the Secret too. deploy/testdata/job-files.yaml is the
// stream, which the deploy module decodes strictly.
func TestK8sFiles(t *testing.T) {
	dir := t.TempDir()
	targets := writeFile(t, dir, "t.http", "GET http://openload-stub:8080/predict?u={{csv.user}}\nX-Trace: {{seq}}\n")
	values := writeFile(t, dir, "users.csv", "user\nann\nbob\n")
	if err := os.Mkdir(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	secretTargets := writeFile(t, filepath.Join(dir, "b"), "t.http", "GET http://openload-stub:8080/predict\nAuthorization: Bearer file-s3cret\n")
	const token = "Bearer s3cret-token"
	args := []string{"k8s", "manifest", "--shards", "3", "-r", "300", "-d", "20s", "--targets", targets, "--values", values,
		"-H", "Authorization: " + token, "-H", "X-Tenant: tenant-s3cret", "--redact", "x-tenant", "-H", "X-Plain: shown"}
	stdout, stderr := runOK(t, args...)
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
	golden.CheckFile(t, filepath.Join("..", "..", "deploy", "testdata", "job-files.yaml"), stdout)
	docs := k8sDocs(t, stdout)
	job := docs["Job"]
	for _, secret := range []string{"s3cret-token", "tenant-s3cret"} {
		if strings.Contains(strings.ToLower(job), secret) {
			t.Errorf("the Job holds %q:\n%s", secret, job)
		}
	}
	if strings.Contains(stdout, "s3cret") {
		t.Errorf("a secret in clear in the stream:\n%s", stdout)
	}
	if !strings.Contains(docs["ConfigMap"], "openload.dev/run: openload") || !strings.Contains(docs["Secret"], "openload.dev/run: openload") {
		t.Errorf("the ConfigMap and Secret lack the run's label:\n%s", stdout)
	}
	var j struct {
		Spec struct {
			Template struct {
				Spec struct{ Containers []struct{ Args []string } }
			}
		}
	}
	if err := yaml.Unmarshal([]byte(job), &j); err != nil {
		t.Fatal(err)
	}
	got := j.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--targets=" + kube.FilesDir + "/targets-t.http", "--values=" + kube.FilesDir + "/values-users.csv",
		"--header=Authorization: $(OPENLOAD_HEADER_0)", "--header=X-Tenant: $(OPENLOAD_HEADER_1)", "--header=X-Plain: shown"} {
		if !slices.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}

	// A targets file's @body files travel too, the file naming them
	// where the pods find them.
	body := writeFile(t, dir, "body.json", `{"a": 1}`)
	withBody := writeFile(t, dir, "post.http", "POST http://openload-stub:8080/predict\nContent-Type: application/json\n@"+body+"\n")
	stdout, _ = runOK(t, "k8s", "manifest", "--shards", "2", "-r", "10", "--targets", withBody)
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal([]byte(k8sDocs(t, stdout)["ConfigMap"]), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["body-body.json"] != `{"a": 1}` || cm.Data["targets-post.http"] != "POST http://openload-stub:8080/predict\nContent-Type: application/json\n@"+kube.FilesDir+"/body-body.json\n" {
		t.Errorf("the targets' body did not travel: %q", cm.Data)
	}

	// A file that names a credential header is the Secret's; its
	// content in the pods is the file's.
	stdout, _ = runOK(t, "k8s", "manifest", "--shards", "2", "-r", "10", "--targets", secretTargets)
	docs = k8sDocs(t, stdout)
	if _, ok := docs["ConfigMap"]; ok || !strings.Contains(docs["Job"], "--targets="+kube.SecretDir+"/targets-t.http") {
		t.Errorf("a targets file with a credential is not the Secret's:\n%s", stdout)
	}
	t.Logf("before: k8s run --targets t.http: refused \"the pods cannot read your files\"; now:\n%s", docs["Job"][strings.Index(docs["Job"], "volumeMounts"):])
}

// TestK8sFilesRun: `k8s run` creates the ConfigMap and Secret with the
// Job, in one kubectl create; the Job's spec holds no secret.
func TestK8sFilesRun(t *testing.T) {
	f := newFake(t, fakeScenario{
		Job:  []string{jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete")},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
		Logs: podLogs(t),
	})
	dir := t.TempDir()
	values := writeFile(t, dir, "users.csv", "user\nann\n")
	targets := writeFile(t, dir, "t.http", "GET http://openload-stub:8080/predict?u={{csv.user}}\n")
	args := k8sArgs(f, "--values", values, "--targets", targets, "-H", "Authorization: Bearer s3cret-token")
	args = args[:len(args)-1] // --targets names the URL
	code, stdout, stderr := runCLI(args...)
	t.Logf("stderr:\n%s", stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "created.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := k8sDocs(t, string(b))
	if len(docs) != 3 || strings.Contains(string(b), "s3cret") {
		t.Errorf("created %d documents (want ConfigMap, Secret, Job), secret in clear %v", len(docs), strings.Contains(string(b), "s3cret"))
	}
	if f.called("create", "-f", "-") != 1 {
		t.Errorf("calls: %q", f.calls())
	}
}

// TestK8sFilesTooBig: a file past a ConfigMap's 1 MiB is refused before
// anything is created, in one line naming it and its size.
func TestK8sFilesTooBig(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.csv", "user\n"+strings.Repeat("a-user-name\n", 100_000))
	f := newFake(t, fakeScenario{})
	code, _, stderr := runCLI(k8sArgs(f, "--values", big, "-H", "X-User: {{csv.user}}")...)
	want := `openload: k8s run: "` + big + `" is 1.1 MiB: the ConfigMap that carries a run's files holds 1016 KiB at most, 1.1 MiB in all here (put it in the image, or shorten it)`
	if code != exitUsage || !strings.HasPrefix(stderr, want+"\n") || strings.Count(stderr, "\n") != 2 || len(f.calls()) != 0 {
		t.Errorf("exit %d, calls %q, stderr:\n%s\nwant:\n%s", code, f.calls(), stderr, want)
	}
}

// TestK8sPlacement: the placement and identity flags render into the
// pod template (deploy/testdata/job-placement.yaml, which the deploy
// module decodes strictly and checks field by field).
func TestK8sPlacement(t *testing.T) {
	stdout, stderr := runOK(t, "k8s", "manifest", "--shards", "3", "-r", "300", "-d", "20s",
		"--node-selector", "pool=load", "--node-selector", "kubernetes.io/arch=amd64",
		"--toleration", "dedicated=load:NoSchedule", "--toleration", "spot:PreferNoSchedule",
		"--one-per-node", "--image-pull-secret", "regcred", "--service-account", "openload-runner",
		"--pod-label", "team=perf", "--pod-annotation", "example.com/note=a run, with commas",
		"--priority-class", "batch-low", "--image", "registry.example.com/openload:v1",
		"http://openload-stub:8080/predict")
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
	golden.CheckFile(t, filepath.Join("..", "..", "deploy", "testdata", "job-placement.yaml"), stdout)
}

// TestK8sImageWarning: a local tag whose pull policy would send a node
// to Docker Hub is said on stderr; a local tag not latest gets
// IfNotPresent, a registry's image the cluster's default.
func TestK8sImageWarning(t *testing.T) {
	url := "http://openload-stub:8080/predict"
	for _, c := range []struct {
		args   []string
		warn   string
		policy string
	}{
		{[]string{"--image", "openload:dev"}, "", "imagePullPolicy: IfNotPresent"},
		{[]string{"--image", "openload"}, "image openload names no registry and is tagged latest", ""},
		{[]string{"--image", "openload:dev", "--image-pull-policy", "Always"}, "image openload:dev names no registry and its pull policy is Always", "imagePullPolicy: Always"},
		{[]string{"--image", "openload:latest", "--image-pull-policy", "Never"}, "", "imagePullPolicy: Never"},
		{[]string{"--image", "ghcr.io/x/openload:1"}, "", ""},
		{[]string{"--image", "localhost:5000/openload:latest"}, "", ""},
	} {
		stdout, stderr := runOK(t, append(append([]string{"k8s", "manifest", "--shards", "2", "-r", "10"}, c.args...), url)...)
		if (c.warn == "") != (stderr == "") || !strings.Contains(stderr, c.warn) || strings.Count(stderr, "\n") > 1 {
			t.Errorf("%q: stderr %q, want %q", c.args, stderr, c.warn)
		}
		if got := regexp.MustCompile(`imagePullPolicy: \w+`).FindString(stdout); got != c.policy {
			t.Errorf("%q: %q, want %q", c.args, got, c.policy)
		}
		if stderr != "" {
			t.Logf("%q: %s", c.args, stderr)
		}
	}
}
