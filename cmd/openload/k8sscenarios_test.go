package main

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/kube"
)

// TestK8sScenarios: `k8s run --scenarios mix.yaml` carries the file and
// every file its scenarios name (a targets file and its @body, a values
// CSV, a body file, by relative and absolute paths) in the run's
// ConfigMap, the file's paths rewritten to where the pods find them; the
// pods' arguments name the mounted file, and a scenario's objectives
// reach them as --slo. Laid out as the mount lays it out, the rendered
// file loads with the loader a pod runs (buildScenarios) into the same
// scenarios as the original here: the same requests, values and bodies.
func TestK8sScenarios(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the scenarios' relative paths are the working directory's, as a local run reads them
	writeFile(t, dir, "post.json", `{"n": {{seq}}}`)
	writeFile(t, dir, "t.http", "GET http://openload-stub:8080/a?u={{csv.user}}\n\nPOST http://openload-stub:8080/b\n@post.json\n")
	writeFile(t, dir, "users.csv", "user\nann\nbob\n")
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := writeFile(t, filepath.Join(dir, "data"), "cart.json", `{"cart": 1}`)
	mix := writeFile(t, dir, "mix.yaml", `# the shop's mix
scenarios:
  - name: browse
    rate: 20
    targets: t.http
    values: [users.csv]
  - name: checkout
    rate: 5
    method: POST
    body-file: `+body+`
    url: http://openload-stub:8080/checkout
    slo: ["response.p99<=300ms"]
`)
	// The stream k8s run creates: ConfigMap, Job.
	stream, _ := runOK(t, "k8s", "manifest", "--shards", "4", "-d", "1s", "--scenarios", "mix.yaml")
	docs := k8sDocs(t, stream)
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal([]byte(docs["ConfigMap"]), &cm); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(cm.Data))
	if want := []string{"body-cart.json", "body-post.json", "scenarios-mix.yaml", "targets-t.http", "values-users.csv"}; !slices.Equal(keys, want) {
		t.Errorf("the ConfigMap holds %q, want %q", keys, want)
	}
	rendered := cm.Data["scenarios-mix.yaml"]
	for _, want := range []string{"targets: " + kube.FilesDir + "/targets-t.http", "values: [" + kube.FilesDir + "/values-users.csv]",
		"body-file: " + kube.FilesDir + "/body-cart.json", "# the shop's mix"} {
		if !strings.Contains(rendered, want) {
			t.Errorf("the rendered scenarios lack %q:\n%s", want, rendered)
		}
	}
	if strings.Contains(rendered, "slo") || cm.Data["targets-t.http"] != "GET http://openload-stub:8080/a?u={{csv.user}}\n\nPOST http://openload-stub:8080/b\n@"+kube.FilesDir+"/body-post.json\n" {
		t.Errorf("rendered:\n%s\ntargets:\n%s", rendered, cm.Data["targets-t.http"])
	}
	var j struct {
		Spec struct {
			Template struct {
				Spec struct{ Containers []struct{ Args []string } }
			}
		}
	}
	if err := yaml.Unmarshal([]byte(docs["Job"]), &j); err != nil {
		t.Fatal(err)
	}
	args := j.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--scenarios=" + kube.FilesDir + "/scenarios-mix.yaml", "--slo=checkout:response.p99<=300ms", "--duration=1s"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}

	// The pods' view: the ConfigMap's keys as files in a directory that
	// stands for the mount, read from elsewhere (no file of dir is
	// reached), with the pods' arguments; the stub's address is a
	// local server's.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	mount := t.TempDir()
	inMount := strings.NewReplacer(kube.FilesDir+"/", mount+"/", "http://openload-stub:8080", srv.URL)
	for k, v := range cm.Data {
		writeFile(t, mount, k, inMount.Replace(v))
	}
	var podArgs []string
	for _, a := range args[4:] { // the shard's own four, then the run's
		podArgs = append(podArgs, inMount.Replace(a))
	}
	t.Chdir(t.TempDir())
	inPod := loadScenarios(t, append([]string{"--shard=1/4"}, podArgs...))
	t.Chdir(dir)
	here := loadScenarios(t, []string{"--shard=1/4", "--duration=1s", "--scenarios=" + mix})
	if len(inPod.scs) != 2 || len(here.scs) != 2 {
		t.Fatalf("%d scenarios in the pod, %d here", len(inPod.scs), len(here.scs))
	}
	for i := range here.scs {
		p, h := inPod.scs[i].Options, here.scs[i].Options
		if inPod.scs[i].Name != here.scs[i].Name || p.Schedule.Rate != h.Schedule.Rate || p.Method != h.Method ||
			string(p.Body) != string(h.Body) || len(p.Targets) != len(h.Targets) {
			t.Errorf("scenario %d: in the pod %s %+v, here %s %+v", i, inPod.scs[i].Name, p, here.scs[i].Name, h)
		}
		for k := range h.Targets {
			for seq := range uint64(3) {
				if a, b := sent(p.Targets[k], seq), sent(h.Targets[k], seq); a != b {
					t.Errorf("scenario %d target %d request %d: in the pod %q, here %q", i, k, seq, a, b)
				}
			}
		}
	}
	if got := sent(here.scs[0].Options.Targets[0], 1) + " " + sent(here.scs[0].Options.Targets[1], 2); got != `GET /a?u=bob POST /b {"n": 2}` {
		t.Errorf("here, the targets send %q", got)
	}
	if string(here.scs[1].Options.Body) != `{"cart": 1}` || len(inPod.objs) != len(here.objs) {
		t.Errorf("here: body %q, objectives %d (in the pod %d)", here.scs[1].Options.Body, len(here.objs), len(inPod.objs))
	}

	// The four pods run their shards from the mount, and k8s run merges
	// their logs: 20/s and 5/s for 1 s, the scenario's objective judged
	// on the merge.
	t.Chdir(t.TempDir())
	at := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	logs := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			code, stdout, stderr := runCLI(append([]string{fmt.Sprintf("--shard=%d/4", i), "--start-at=" + at, "--quiet", "--output=-"}, podArgs...)...)
			if code != exitOK {
				t.Errorf("shard %d: exit %d: %s", i, code, stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			logs[fakePod{index: i}.name()] = "openload: shard starting\n" + stdout
		})
	}
	wg.Wait()
	t.Chdir(dir)
	f := newFake(t, fakeScenario{
		Job:  []string{jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete")},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
		Logs: logs,
	})
	code, stdout, stderr := runCLI("k8s", "run", "--shards", "4", "--name", "openload-test", "--kubectl", f.command,
		"--lead", "1s", "--poll", "20ms", "--grace", "5s", "-d", "1s", "--scenarios", "mix.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	wantLines(t, stderr, "4 pods share the 2 scenarios of mix.yaml (browse, checkout)", "→ browse: GET ", "; checkout: POST http://openload-stub:8080/checkout")
	wantLines(t, stdout, "scheduled 25 · sent 25 · completed 25", "PASS  checkout:response.p99 <= 300.000 ms")
	b, err := os.ReadFile(filepath.Join(f.dir, "created.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ Data map[string]string }
	if err := yaml.Unmarshal([]byte(k8sDocs(t, string(b))["ConfigMap"]), &created); err != nil || !maps.Equal(created.Data, cm.Data) {
		t.Errorf("k8s run created another ConfigMap than k8s manifest renders (%v):\n%s", err, b)
	}
	t.Logf("k8s run:\n%s%s", stderr, stdout)
	t.Logf("before: k8s run --scenarios mix.yaml: refused \"a cluster run of scenarios is not built yet\"; now the pods read:\n%s", rendered)
}

// sent is what request seq of target tg sends: its method, path and
// body, templates applied.
func sent(tg engine.Target, seq uint64) string {
	path, body := tg.URL.RequestURI(), tg.Body
	if tg.Path != nil {
		path = string(tg.Path.Append(nil, seq))
	}
	if tg.BodyT != nil {
		body = tg.BodyT.Append(nil, seq)
	}
	return strings.TrimSpace(tg.Method + " " + path + " " + string(body))
}

// loadScenarios checks a run of scenarios as a pod's openload does.
func loadScenarios(t *testing.T, args []string) *scenarioSet {
	t.Helper()
	var o loadOptions
	fs := loadFlags(&o)
	if err := parseFlags(fs, args); err != nil {
		t.Fatal(err)
	}
	set, err := buildScenarios(&o, fs, args)
	set.close()
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return set
}

// TestK8sScenariosRefused: a scenarios file the pods could not run is
// refused in one line before anything is created, as a local run refuses
// it, and so is one whose files a ConfigMap cannot carry.
func TestK8sScenariosRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "big.csv", "user\n"+strings.Repeat("a-user-name\n", 100_000))
	writeFile(t, dir, "ok.yaml", "scenarios:\n  - name: a\n    rate: 5\n    url: http://openload-stub:8080/a\n")
	writeFile(t, dir, "nofile.yaml", "scenarios:\n  - name: a\n    rate: 5\n    url: http://openload-stub:8080/a\n    values: missing.csv\n    header: [\"X-User: {{csv.user}}\"]\n")
	writeFile(t, dir, "big.yaml", "scenarios:\n  - name: a\n    rate: 5\n    url: http://openload-stub:8080/a\n    values: big.csv\n    header: [\"X-User: {{csv.user}}\"]\n")
	f := newFake(t, fakeScenario{})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenarios", "absent.yaml"}, `--scenarios "absent.yaml": no such file or directory`},
		{[]string{"--scenarios", "ok.yaml", "-r", "10"}, "--rate with --scenarios: each scenario has its own schedule"},
		{[]string{"--scenarios", "nofile.yaml"}, `--scenarios "nofile.yaml": line 5: scenario "a": --values "missing.csv": no such file`},
		{[]string{"--scenarios", "big.yaml"}, `"big.csv" is 1.1 MiB: the ConfigMap that carries a run's files holds 1016 KiB at most`},
	} {
		args := append([]string{"k8s", "run", "--shards", "2", "--kubectl", f.command, "-d", "1s"}, c.args...)
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 2 {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant %q", c.args, code, stderr, c.want)
		}
	}
	if len(f.calls()) != 0 {
		t.Errorf("kubectl was run: %q", f.calls())
	}
}

// TestK8sScenariosDataset: a conversation's ShareGPT dataset travels
// too, the conversation naming it where the pods find it.
func TestK8sScenariosDataset(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "prompt", "testdata", "sharegpt.json"))
	dir := t.TempDir()
	t.Chdir(dir)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "chats.json"), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "conv.yaml", "scenarios:\n  - name: chat\n    rate: 2\n    url: http://openload-stub:8080/v1/chat/completions\n    conversation:\n      dataset: chats.json\n")
	stdout, _ := runOK(t, "k8s", "manifest", "--shards", "2", "-d", "10s", "--scenarios", "conv.yaml")
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal([]byte(k8sDocs(t, stdout)["ConfigMap"]), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["dataset-chats.json"] != string(b) || !strings.Contains(cm.Data["scenarios-conv.yaml"], "dataset: "+kube.FilesDir+"/dataset-chats.json") {
		t.Errorf("the dataset did not travel: keys %q, scenarios:\n%s", slices.Sorted(maps.Keys(cm.Data)), cm.Data["scenarios-conv.yaml"])
	}
}
