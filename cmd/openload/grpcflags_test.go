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
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
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
// the same call: the method's path, POST, a gRPC run, h2c, and the
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
		// gRPC's own headers (te, grpc-timeout) are the engine's to add to
		// every call (engine.Config.GRPC; its contract test reads them).
		if r.URL.String() != url+"/openload.test.Model/Predict" || r.Method != http.MethodPost || r.Protocol != engine.H2C ||
			!r.GRPC || h.Get("X-User") != "u1" {
			t.Errorf("%q: %s %s %s grpc %v %v", extra, r.Method, r.URL, r.Protocol, r.GRPC, h)
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
	ids := grpcIDs(t, s, o.run.Bodies)
	if len(ids) != 10 {
		t.Fatalf("%d bodies, want 10", len(ids))
	}
	for i, id := range ids {
		if id != fmt.Sprint("r", i) {
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
		{[]string{"--grpc-method", grpctest.Service + "/Nope", "--protoset", protoset, url}, `--protoset ` + protoset + `: service openload.test.Model has no method Nope (its methods: Predict, Echo, Tokens, Sum, Chat)`},
		{[]string{"--grpc-method", grpcPredict, "--proto", protoFile, "--protoset", protoset, url}, `--proto and --protoset are exclusive`},
		{[]string{"--grpc-method", grpcPredict, dead}, `--grpc-method ` + grpcPredict + `: reflection at 127.0.0.1:1: `},
		{[]string{"--proto", protoFile, url}, `--proto applies to gRPC calls`},
		{[]string{"--grpc-method", grpcPredict, url + "/x"}, `the method names the path`},
		{[]string{"--grpc-method", grpcPredict, "-m", "GET", url}, `-m GET: a gRPC call is a POST`},
		{[]string{"--grpc-method", grpcPredict, "--body", `[{"id":"a"}]`, url}, `--body: a JSON array of messages is for a client- or bidi-streaming method: openload.test.Model.Predict takes one message`},
		{[]string{"--grpc-method", grpctest.Service + "/Sum", "--body", `[]`, url}, `--body: an empty array: a call of openload.test.Model.Sum sends at least one message`},
		{[]string{"--grpc-method", grpctest.Service + "/Chat", "--body-file", writeFile(t, t.TempDir(), "c.jsonl", "[{\"id\":\"a\"}]\n[]\n"), url}, `--body: line 2: an empty array`},
	} {
		_, err := grpcValidate(append(append([]string{}, run...), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.args, err, c.want)
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
	// A call is HTTP/2 without --h2c, so --max-streams applies (ghz's
	// --connections maps to it).
	runOK(t, "--rate", "20", "-d", "1s", "-q", "--max-streams", "2", "--grpc-method", grpcPredict, "http://"+s.Addr)
	if n := s.Calls.Load(); n != 40 {
		t.Errorf("server read %d calls after the --max-streams run, want 40", n)
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
	// A streaming-request method's .jsonl: a line is one call's array.
	calls := writeFile(t, dir, "calls.jsonl", "[{\"id\":\"a\"},{\"id\":\"b\"}]\n{\"id\":\"c\"}\n[{\"id\":\"d\"},{\"id\":\"e\"},{\"id\":\"f\"}]\n")
	o, err := grpcValidate("--rate", "10", "-d", "1s", "--grpc-method", grpctest.Service+"/Sum", "--protoset", protoset, "--body-file", calls, url)
	if err != nil {
		t.Fatal(err)
	}
	var per []string
	for _, b := range o.run.Bodies {
		var msgs []string
		for rest := b; len(rest) > 0; {
			one, r, ok, err := framing.CutGRPC(rest, 0)
			if !ok || err != nil {
				t.Fatalf("body % x: %v", b, err)
			}
			msgs = append(msgs, grpcIDs(t, s, [][]byte{framing.AppendGRPC(nil, one)})...)
			rest = r
		}
		per = append(per, strings.Join(msgs, "+"))
	}
	if got := strings.Join(per, " "); got != "a+b c d+e+f" {
		t.Errorf("Sum's .jsonl: calls %s, want a+b c d+e+f", got)
	}
	o, err = grpcValidate("--rate", "100", "-d", "1s", "--arrival", "poisson", "--grpc-method", grpcPredict, "--protoset", protoset, "--body", `{"id":"{{seq}}"}`, url)
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

// TestGRPCKnownAnswers: the known answers through the command
// line against grpc-go (grpctest), whose own count of the calls it read
// is the judge of openload's wire attempts.
//
//   - unary, 20 ms each: every call OK, the service time at least the delay;
//   - a stall of 1 s once: the stalled call's response time shows it, and
//     the median service time does not (the other calls go on, on
//     streams of their own);
//   - RESOURCE_EXHAUSTED every 2nd call: half, counted by name, an
//     answer (the run is valid), and the objective grpc.resource_exhausted
//     reads the share;
//   - a server stream of 5 messages 10 ms apart: 5 messages a call, 4
//     gaps a call of at least 10 ms (sleeps run long, never short);
//   - client and bidi streaming, 3 messages a call (a JSON array), on
//     the event loop and on x/net's transport (--net-http): the server
//     read 3 messages a call, Sum answered each call once, and Chat's
//     echoes are 3 messages a call.
func TestGRPCKnownAnswers(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, opts []grpctest.Option, args ...string) (*result.Result, *grpctest.Server) {
		s, err := grpctest.Start(grpctest.ReflectV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		out := filepath.Join(dir, name+".json")
		runCLI(append(append([]string{"--rate", "20", "-d", "1s", "-q", "-o", out}, args...), "http://"+s.Addr)...)
		res := readResult(t, out)
		if res.Wire == nil || res.Wire.Attempts != s.Calls.Load() || res.Counts.Scheduled != 20 {
			t.Errorf("%s: wire %+v, server read %d calls, scheduled %d; want the server's count = attempts, 20 scheduled", name, res.Wire, s.Calls.Load(), res.Counts.Scheduled)
		}
		t.Logf("%s: server read %d calls; openload: %d attempts, grpc %v, response p50 %.1f max %.1f ms, service p50 %.1f ms",
			name, s.Calls.Load(), res.Wire.Attempts, res.GRPC, res.Response.P50, res.Response.Max, res.Service.P50)
		return res, s
	}
	body := []string{"--body", `{"id":"r{{seq}}","inputs":[1]}`}
	unary, _ := run("unary", []grpctest.Option{grpctest.WithDelay(20 * time.Millisecond)}, append([]string{"--grpc-method", grpcPredict}, body...)...)
	if unary.GRPC["ok"] != 20 || unary.Service.P50 < 20 {
		t.Errorf("unary: grpc %v, service p50 %.1f ms; want 20 OK, at least 20 ms", unary.GRPC, unary.Service.P50)
	}
	stall, _ := run("stall", []grpctest.Option{grpctest.WithStallOnce(time.Second)}, append([]string{"--grpc-method", grpcPredict}, body...)...)
	if stall.Response.Max < 1000 || stall.Service.P50 >= 500 {
		t.Errorf("stall: response max %.1f ms, service p50 %.1f ms; want the stall in one response, not the median service", stall.Response.Max, stall.Service.P50)
	}
	ex, _ := run("exhausted", []grpctest.Option{grpctest.WithExhausted(2)}, append([]string{"--grpc-method", grpcPredict, "--slo", "grpc.resource_exhausted<=60%"}, body...)...)
	if ex.GRPC["ok"] != 10 || ex.GRPC["resource_exhausted"] != 10 {
		t.Errorf("exhausted: grpc %v, want 10 OK and 10 RESOURCE_EXHAUSTED", ex.GRPC)
	}
	st, _ := run("stream", []grpctest.Option{grpctest.WithStream(5, 10*time.Millisecond)}, append([]string{"--grpc-method", grpctest.Service + "/Tokens"}, body...)...)
	if s := st.Stream; s == nil || s.OutputTokens != 100 || s.ITL.P50 < 10 {
		t.Errorf("stream: %+v; want 100 messages (5 a call), inter-message p50 at least 10 ms", s)
	} else {
		t.Logf("stream: %d messages, first message from the schedule p50 %.1f ms, from the send %.1f ms, inter-message p50 %.1f ms", s.OutputTokens, s.TTFTResponse.P50, s.TTFTService.P50, s.ITL.P50)
	}
	three := []string{"--body", `[{"id":"r{{seq}}","inputs":[1]},{"id":"s","inputs":[2]},{"id":"t"}]`}
	for _, client := range [][]string{nil, {"--net-http"}} {
		for _, m := range []struct{ method, name string }{{"Sum", "client"}, {"Chat", "bidi"}} {
			name := m.name + strings.Join(client, "")
			args := append(append([]string{"--grpc-method", grpctest.Service + "/" + m.method}, client...), three...)
			res, s := run(name, nil, args...)
			if n := s.Messages.Load(); n != 3*s.Calls.Load() || s.Calls.Load() != 20 {
				t.Errorf("%s: the server read %d messages in %d calls, want 3 a call, 20 calls", name, n, s.Calls.Load())
			}
			perCall := map[string]int64{"client": 1, "bidi": 3}[m.name]
			if st := res.Stream; res.GRPC["ok"] != 20 || st == nil || st.OutputTokens != 20*perCall {
				t.Errorf("%s: grpc %v, stream %+v; want 20 OK, %d answer messages a call", name, res.GRPC, st, perCall)
			} else {
				t.Logf("%s (%s): server read %d messages in %d calls; openload: %d answer messages, client %s",
					name, m.method, s.Messages.Load(), s.Calls.Load(), st.OutputTokens, res.Config.Client)
			}
		}
	}
}

// TestGRPCLog: a gRPC run's --log names each call's grpc-status
// (grpc_status), so that the share RESOURCE_EXHAUSTED is traced to its
// calls: the log's count of each is the result's.
func TestGRPCLog(t *testing.T) {
	s, err := grpctest.Start(grpctest.ReflectV1, grpctest.WithExhausted(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	dir := t.TempDir()
	logFile, out := filepath.Join(dir, "run.csv"), filepath.Join(dir, "run.json")
	runCLI("--rate", "10", "-d", "1s", "-q", "--log", logFile, "-o", out, "--grpc-method", grpcPredict, "http://"+s.Addr)
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := recorder.NewLogReader(f, logFile)
	got := map[string]int64{}
	for lr.Scan() {
		if e := lr.Entry(); e.GRPC {
			got[result.GRPCKey(e.GRPCStatus)]++
		}
	}
	if lr.Err() != nil {
		t.Fatal(lr.Err())
	}
	if res := readResult(t, out); fmt.Sprint(got) != fmt.Sprint(res.GRPC) || got["resource_exhausted"] != 5 {
		t.Errorf("log's grpc_status counts %v, result's %v; want 5 resource_exhausted in both", got, res.GRPC)
	}
}
