package kube

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseIndexes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"2", []int{2}, false},
		{"1,3-5,7", []int{1, 3, 4, 5, 7}, false},
		{"3-5,4", []int{3, 4, 5}, false},
		{"x", nil, true},
		{"5-3", nil, true},
		{"-1", nil, true},
	} {
		got, err := ParseIndexes(c.in)
		if (err != nil) != c.bad || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v", c.in, got, err)
		}
	}
}

// TestResultJSON: the result is found among stderr's lines, before,
// after and inside it; a log without one, or with its start only, says so.
func TestResultJSON(t *testing.T) {
	log := "openload: starting\n{\n  \"a\": 1,\nopenload: a warning\n  \"b\": {\n    \"c\": 2\n  }\n}\nopenload: done\n"
	got, err := ResultJSON([]byte(log))
	if err != nil || string(got) != "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": 2\n  }\n}\n" {
		t.Errorf("%q, %v", got, err)
	}
	if _, err := ResultJSON([]byte("openload: --output \"/x\": permission denied\n")); !errors.Is(err, ErrNoResult) {
		t.Errorf("no result: %v", err)
	}
	if _, err := ResultJSON([]byte("{\n  \"a\": 1,\n")); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
}

func TestParse(t *testing.T) {
	st, err := ParseJob([]byte(`{"kind":"Job","status":{"failed":1,"succeeded":3,"failedIndexes":"2","conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True","reason":"FailedIndexes","message":"Job has failed indexes"}]}}`))
	if err != nil || !st.Failed || st.Complete || !st.Ended() || st.Reason != "FailedIndexes" || !slices.Equal(st.FailedIndexes, []int{2}) {
		t.Errorf("%+v, %v", st, err)
	}
	if _, err := ParseJob([]byte(`{"kind":"Pod"}`)); err == nil {
		t.Error("a Pod read as a Job")
	}
	pods, err := ParsePods([]byte(`{"kind":"List","items":[
	 {"metadata":{"name":"p0","annotations":{"batch.kubernetes.io/job-completion-index":"0"}},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes are available: 1 Insufficient cpu."}]}},
	 {"metadata":{"name":"p1","labels":{"batch.kubernetes.io/job-completion-index":"1"},"deletionTimestamp":"2026-12-01T15:00:00Z"},"status":{"phase":"Failed","containerStatuses":[{"name":"openload","state":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}}]}},
	 {"metadata":{"name":"p2"},"status":{"phase":"Pending","containerStatuses":[{"name":"openload","state":{"waiting":{"reason":"ErrImagePull","message":"not found"}}}]}}]}`))
	if err != nil || len(pods) != 3 {
		t.Fatalf("%+v, %v", pods, err)
	}
	for i, want := range []string{
		"Pending (0/1 nodes are available: 1 Insufficient cpu.)",
		"Failed, exit 137 (OOMKilled), being deleted",
		"Pending (ErrImagePull: not found)",
	} {
		if got := pods[i].State(); got != want {
			t.Errorf("pod %d: %q, want %q", i, got, want)
		}
	}
	if pods[0].Index != 0 || pods[1].Index != 1 || pods[2].Index != -1 || pods[0].Running() || !pods[1].Running() {
		t.Errorf("%+v", pods)
	}
}

// TestValidate: what the cluster would refuse is refused here, by field.
func TestValidate(t *testing.T) {
	ok := Job{Name: "openload", Image: "openload:dev", Shards: 4, CPU: "500m", Memory: "256Mi", MemoryLimit: "1Gi", StartAt: StartPlaceholder}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for field, mutate := range map[string]func(*Job){
		"Name":        func(j *Job) { j.Name = "Open_Load" },
		"Namespace":   func(j *Job) { j.Namespace = "a b" },
		"Image":       func(j *Job) { j.Image = "" },
		"Shards":      func(j *Job) { j.Shards = 0 },
		"CPU":         func(j *Job) { j.CPU = "1.5cores" },
		"Memory":      func(j *Job) { j.Memory = "256MB" },
		"MemoryLimit": func(j *Job) { j.MemoryLimit = "128Mi" },
		"PullPolicy":  func(j *Job) { j.PullPolicy = "Sometimes" },
	} {
		j := ok
		mutate(&j)
		if err := j.Validate(); err == nil || !strings.HasPrefix(err.Error(), field+" ") {
			t.Errorf("%s: %v", field, err)
		}
	}
	for q, want := range map[string]int64{"500m": 500, "1": 1000, "0.25": 250, "2.5": 2500} {
		if got, err := MilliCPU(q); err != nil || got != want {
			t.Errorf("MilliCPU(%q) = %d, %v", q, got, err)
		}
	}
}

// TestFiles: text stays text, anything else base64 in binaryData; the
// ConfigMap and Secret come before the Job, each file mounted where
// File.Path says, the secret variables' values never in the Job.
func TestFiles(t *testing.T) {
	j := Job{Name: "openload", Image: "openload:dev", Shards: 2, CPU: "500m", Memory: "256Mi", StartAt: StartPlaceholder,
		Files: []File{
			{Key: FileKey("values", "dir/u s.csv"), Source: "dir/u s.csv", Data: []byte("user\nann\n")},
			{Key: FileKey("body", "b.bin"), Source: "b.bin", Data: []byte{0xff, 0x00, 0x01}},
			{Key: FileKey("targets", "t.http"), Source: "t.http", Data: []byte("GET http://x/\nCookie: c=1\n"), Secret: true},
		},
		SecretEnv: []SecretEnv{{Name: "OPENLOAD_HEADER_0", Key: "header-0", Value: "Bearer tok"}}}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	y := string(j.YAML())
	docs := strings.Split(y, "\n---\n")
	if len(docs) != 3 || !strings.Contains(docs[0], "kind: ConfigMap") || !strings.Contains(docs[1], "kind: Secret") || !strings.Contains(docs[2], "kind: Job") {
		t.Fatalf("documents:\n%s", y)
	}
	for _, want := range []string{`values-u_s.csv: "user\nann\n"`, "binaryData:\n  body-b.bin: /wAB"} {
		if !strings.Contains(docs[0], want) {
			t.Errorf("ConfigMap lacks %q:\n%s", want, docs[0])
		}
	}
	if strings.Contains(docs[0], "Cookie") || strings.Contains(y, "tok\n") || strings.Contains(docs[2], "Bearer") {
		t.Errorf("a secret in clear:\n%s", y)
	}
	if p := j.Files[2].Path(); p != SecretDir+"/targets-t.http" {
		t.Errorf("path %s", p)
	}
	big := j
	big.Files = []File{{Key: "values-big.csv", Source: "big.csv", Data: make([]byte, MaxObjectBytes)}}
	if err := big.Validate(); err == nil || !strings.HasPrefix(err.Error(), `"big.csv" is 1.0 MiB: the ConfigMap`) {
		t.Errorf("too big: %v", err)
	}
}

// TestImage: a local tag is one without a registry host; its policy.
func TestImage(t *testing.T) {
	for _, c := range []struct {
		image, policy, want string
		warn                bool
	}{
		{"openload:dev", "", "IfNotPresent", false},
		{"openload", "", "", true},
		{"openload:latest", "IfNotPresent", "IfNotPresent", true},
		{"openload:dev", "Always", "Always", true},
		{"library/openload:dev", "", "IfNotPresent", false},
		{"ghcr.io/o/openload:latest", "", "", false},
		{"localhost:5000/openload", "Always", "Always", false},
		{"openload@sha256:abc", "", "", false},
	} {
		j := Job{Image: c.image, PullPolicy: c.policy}
		got, _ := j.ImagePolicy()
		if got != c.want || (j.ImageWarning() != "") != c.warn {
			t.Errorf("%s %q: policy %q, warning %q", c.image, c.policy, got, j.ImageWarning())
		}
	}
}

func TestParseToleration(t *testing.T) {
	for in, want := range map[string]Toleration{
		"k=v:NoSchedule":          {"k", "v", "NoSchedule"},
		"example.com/k:NoExecute": {"example.com/k", "", "NoExecute"},
		"k=:PreferNoSchedule":     {"k", "", "PreferNoSchedule"},
	} {
		if got, err := ParseToleration(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"k=v", "k=v:Nope", "=v:NoSchedule", "k=a b:NoSchedule"} {
		if _, err := ParseToleration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestPullFailed: a container waiting for an image the node could not
// pull (status as a kind node reports it) is told apart from one still
// being created.
func TestPullFailed(t *testing.T) {
	pods, err := ParsePods([]byte(`{"apiVersion":"v1","kind":"List","items":[
	 {"kind":"Pod","metadata":{"name":"openload-x-0-abcde","labels":{"batch.kubernetes.io/job-completion-index":"0"}},"status":{"phase":"Pending","containerStatuses":[{"name":"openload","image":"registry.invalid/openload:dev","ready":false,"restartCount":0,"started":false,"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"registry.invalid/openload:dev\""}}}]}},
	 {"kind":"Pod","metadata":{"name":"openload-x-1-abcde","labels":{"batch.kubernetes.io/job-completion-index":"1"}},"status":{"phase":"Pending","containerStatuses":[{"name":"openload","state":{"waiting":{"reason":"ErrImagePull","message":"failed to pull and unpack image \"docker.io/library/openload:dev\": pull access denied"}}}]}},
	 {"kind":"Pod","metadata":{"name":"openload-x-2-abcde","labels":{"batch.kubernetes.io/job-completion-index":"2"}},"status":{"phase":"Pending","containerStatuses":[{"name":"openload","state":{"waiting":{"reason":"ContainerCreating"}}}]}}]}`))
	if err != nil || len(pods) != 3 {
		t.Fatalf("%+v, %v", pods, err)
	}
	if !pods[0].PullFailed() || !pods[1].PullFailed() || pods[2].PullFailed() {
		t.Errorf("%+v", pods)
	}
	if want := `Pending (ImagePullBackOff: Back-off pulling image "registry.invalid/openload:dev")`; pods[0].State() != want {
		t.Errorf("%q, want %q", pods[0].State(), want)
	}
}

// TestParseJobSpec: what collect and status read of a Job they did not
// create: its shards, the shard container's args and start.
func TestParseJobSpec(t *testing.T) {
	st, err := ParseJob([]byte(`{"kind":"Job","metadata":{"name":"openload-x","creationTimestamp":"2026-12-01T14:59:30Z"},"spec":{"completions":4,"template":{"spec":{"containers":[{"name":"sidecar","args":["x"]},{"name":"openload","args":["--shard-from-env=JOB_COMPLETION_INDEX/4","--slo=response.p99<=200ms"],"env":[{"name":"START_AT","value":"2026-12-01T15:00:00Z"}]}]}}},"status":{"active":4}}`))
	if err != nil || st.Shards != 4 || st.StartAt != "2026-12-01T15:00:00Z" || st.Created != "2026-12-01T14:59:30Z" ||
		!slices.Equal(st.Args, []string{"--shard-from-env=JOB_COMPLETION_INDEX/4", "--slo=response.p99<=200ms"}) || st.Ended() {
		t.Errorf("%+v, %v", st, err)
	}
}
