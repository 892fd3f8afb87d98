package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/grpcmsg"
	"github.com/openload/openload/internal/grpcmsg/grpctest"
)

const grpcPredict = grpctest.Service + "/Predict"

// grpcValidate parses and validates a load command line.
func grpcValidate(args ...string) (*loadOptions, error) {
	o := new(loadOptions)
	fs := loadFlags(o)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return o, o.validate(fs)
}

func grpcServer(t *testing.T) *grpctest.Server {
	t.Helper()
	s, err := grpctest.Start(grpctest.ReflectV1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// grpcFiles writes model.proto and its descriptor set into a new
// directory.
func grpcFiles(t *testing.T, s *grpctest.Server) (protoFile, protoset string) {
	t.Helper()
	dir := t.TempDir()
	protoFile, err := grpctest.WriteProto(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := proto.Marshal(grpcmsg.Protoset(s.File))
	if err != nil {
		t.Fatal(err)
	}
	protoset = filepath.Join(dir, "model.protoset")
	if err := os.WriteFile(protoset, set, 0o644); err != nil {
		t.Fatal(err)
	}
	return protoFile, protoset
}

// TestGRPCRequest: reflection (the default), --proto and --protoset set
// the same call: the method's path, POST, gRPC's headers, h2c, and the
// message's framed bytes.
func TestGRPCRequest(t *testing.T) {
	s := grpcServer(t)
	protoFile, protoset := grpcFiles(t, s)
	url := "http://" + s.Addr
	common := []string{"--rate", "10", "-d", "1s", "--timeout", "2s", "-H", "x-user: u1", "--grpc-method", grpcPredict, "--body", `{"id":"a","inputs":[1,2]}`}
	var first []byte
	for _, extra := range [][]string{nil, {"--proto", protoFile}, {"--protoset", protoset}} {
		o, err := grpcValidate(append(append(append([]string{}, common...), extra...), url)...)
		if err != nil {
			t.Fatalf("%q: %v", extra, err)
		}
		r := &o.run
		h := r.Header
		if r.URL.String() != url+"/openload.test.Model/Predict" || r.Method != http.MethodPost || r.Protocol != engine.H2C ||
			h.Get("Content-Type") != "application/grpc" || h.Get("Te") != "trailers" || h.Get("Grpc-Timeout") != "2000m" || h.Get("X-User") != "u1" {
			t.Errorf("%q: %s %s %s %v", extra, r.Method, r.URL, r.Protocol, h)
		}
		if len(r.Bodies) != 0 || len(r.Targets) != 0 {
			t.Errorf("%q: %d bodies %d targets, want one body", extra, len(r.Bodies), len(r.Targets))
		}
		if first == nil {
			first = r.Body
		} else if !bytes.Equal(r.Body, first) {
			t.Errorf("%q: body % x, want % x", extra, r.Body, first)
		}
	}
}

// TestGRPCTemplate: {{seq}} in --body is each request's own, encoded
// before the run: one body per request of the schedule.
func TestGRPCTemplate(t *testing.T) {
	s := grpcServer(t)
	_, protoset := grpcFiles(t, s)
	o, err := grpcValidate("--rate", "10", "-d", "1s", "--grpc-method", grpcPredict, "--protoset", protoset, "--body", `{"id":"r{{seq}}"}`, "http://"+s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	md := s.File.Services().ByName("Model").Methods().ByName("Predict")
	if len(o.run.Bodies) != 10 {
		t.Fatalf("%d bodies, want 10", len(o.run.Bodies))
	}
	for i, b := range o.run.Bodies {
		msg, _, ok, err := framing.CutGRPC(b, 0)
		m := dynamicpb.NewMessage(md.Input())
		if !ok || err != nil || proto.Unmarshal(msg, m) != nil {
			t.Fatalf("body %d: % x", i, b)
		}
		if id := m.Get(md.Input().Fields().ByName("id")).String(); id != fmt.Sprint("r", i) {
			t.Errorf("body %d: id %q", i, id)
		}
	}
}

// TestGRPCErrors: each mistake is one line naming the flag.
func TestGRPCErrors(t *testing.T) {
	s := grpcServer(t)
	protoFile, protoset := grpcFiles(t, s)
	url := "http://" + s.Addr
	dead := "http://127.0.0.1:1" // nothing listens on port 1 of loopback
	run := []string{"--rate", "1", "-d", "1s", "--timeout", "5s"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--grpc-method", "Predict", url}, `--grpc-method: method "Predict": want package.Service/Method`},
		{[]string{"--grpc-method", grpcPredict, "--body", `{"id":1}`, url}, `--body: message does not fit openload.test.PredictRequest: (line 1:7): invalid value for string field id: 1`},
		{[]string{"--grpc-method", "openload.test.Nope/Predict", url}, `unknown service openload.test.Nope (known: openload.test.Model)`},
		{[]string{"--grpc-method", grpctest.Service + "/Nope", "--protoset", protoset, url}, `--protoset ` + protoset + `: service openload.test.Model has no method Nope (its methods: Predict, Echo, Tokens)`},
		{[]string{"--grpc-method", grpcPredict, "--proto", protoFile, "--protoset", protoset, url}, `--proto and --protoset are exclusive`},
		{[]string{"--grpc-method", grpcPredict, dead}, `--grpc-method ` + grpcPredict + `: reflection at 127.0.0.1:1: `},
		{[]string{"--proto", protoFile, url}, `--proto applies to gRPC calls`},
		{[]string{"--grpc-method", grpcPredict, url + "/x"}, `the method names the path`},
		{[]string{"--grpc-method", grpcPredict, "-m", "GET", url}, `-m GET: a gRPC call is a POST`},
	} {
		_, err := grpcValidate(append(append([]string{}, run...), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.args, err, c.want)
		}
	}
}

func TestGRPCTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second:        "30000m",
		1500 * time.Microsecond: "2m",
		100_000 * time.Second:   "100000S",
	} {
		if got := grpcTimeout(d); got != want {
			t.Errorf("grpcTimeout(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestGRPCRun sends a run of calls to the grpc-go server over h2c: the
// server reads every one (the outcome is HTTP's until the engine reads
// grpc-status).
func TestGRPCRun(t *testing.T) {
	s := grpcServer(t)
	runOK(t, "--rate", "20", "-d", "1s", "-q", "--grpc-method", grpcPredict, "--body", `{"id":"r{{seq}}","inputs":[1]}`, "http://"+s.Addr)
	if n := s.Calls.Load(); n != 20 {
		t.Errorf("server read %d calls, want 20", n)
	}
}

// grpcIDs reads each body's id.
func grpcIDs(t *testing.T, s *grpctest.Server, bodies [][]byte) []string {
	t.Helper()
	md := s.File.Services().ByName("Model").Methods().ByName("Predict")
	var ids []string
	for i, b := range bodies {
		msg, _, ok, err := framing.CutGRPC(b, 0)
		m := dynamicpb.NewMessage(md.Input())
		if !ok || err != nil || proto.Unmarshal(msg, m) != nil {
			t.Fatalf("body %d: % x", i, b)
		}
		ids = append(ids, m.Get(md.Input().Fields().ByName("id")).String())
	}
	return ids
}

// TestGRPCBodies: a .jsonl --body-file is one message a line, a CSV's
// values fill {{csv.…}}, and a Poisson schedule gets a message for more
// than its expected count.
func TestGRPCBodies(t *testing.T) {
	s := grpcServer(t)
	_, protoset := grpcFiles(t, s)
	dir := t.TempDir()
	lines := writeFile(t, dir, "m.jsonl", "{\"id\":\"x\"}\n{\"id\":\"y\"}\n")
	values := writeFile(t, dir, "v.csv", "name\nann\nbob\n")
	url := "http://" + s.Addr
	common := []string{"--rate", "10", "-d", "1s", "--grpc-method", grpcPredict, "--protoset", protoset}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--body-file", lines}, "x y"},
		{[]string{"--values", values, "--body", `{"id":"{{csv.name}}"}`}, "ann bob ann bob ann bob ann bob ann bob"},
	} {
		o, err := grpcValidate(append(append(append([]string{}, common...), c.args...), url)...)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got := strings.Join(grpcIDs(t, s, o.run.Bodies), " "); got != c.want {
			t.Errorf("%q: ids %s, want %s", c.args, got, c.want)
		}
	}
	o, err := grpcValidate("--rate", "100", "-d", "1s", "--arrival", "poisson", "--grpc-method", grpcPredict, "--protoset", protoset, "--body", `{"id":"{{seq}}"}`, url)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(o.run.Bodies); n != 160 { // 100 + 6·√100
		t.Errorf("poisson: %d bodies, want 160", n)
	}
}

// TestGRPCRunTLS: an https URL is HTTP/2 over TLS; --insecure lets
// reflection and the calls take the test server's self-signed
// certificate.
func TestGRPCRunTLS(t *testing.T) {
	s, err := grpctest.StartTLS(grpctest.ReflectV1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	o, err := grpcValidate("--rate", "10", "-d", "1s", "--insecure", "--grpc-method", grpcPredict, "https://"+s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if o.run.Protocol != engine.HTTP2 {
		t.Errorf("protocol %s, want %s", o.run.Protocol, engine.HTTP2)
	}
	runOK(t, "--rate", "10", "-d", "1s", "-q", "--insecure", "--grpc-method", grpcPredict, "--body", `{"id":"t"}`, "https://"+s.Addr)
	if n := s.Calls.Load(); n != 10 {
		t.Errorf("server read %d calls, want 10", n)
	}
}

// TestGRPCK8s: a cluster run carries --protoset (binary) and --proto into
// its pods, and refuses --import-path, whose directories it cannot.
func TestGRPCK8s(t *testing.T) {
	s := grpcServer(t)
	protoFile, protoset := grpcFiles(t, s)
	base := []string{"k8s", "manifest", "--shards", "2", "-r", "20", "-d", "2s", "--grpc-method", grpcPredict}
	for _, flag := range []string{"--protoset=" + protoset, "--proto=" + protoFile} {
		stdout, _ := runOK(t, append(append([]string{}, base...), flag, "http://openload-grpc:50051")...)
		name := strings.SplitN(strings.TrimPrefix(flag, "--"), "=", 2)[0]
		if !strings.Contains(stdout, "--"+name+"=/") || strings.Contains(stdout, "--"+name+"="+filepath.Dir(protoFile)) {
			t.Errorf("%s: not carried:\n%s", flag, stdout)
		}
	}
	code, _, stderr := runCLI(append(append([]string{}, base...), "--proto", protoFile, "--import-path", ".", "http://openload-grpc:50051")...)
	if code == exitOK || !strings.Contains(stderr, "--import-path does not apply to a cluster run") {
		t.Errorf("--import-path: exit %d, %s", code, stderr)
	}
}
