package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openload/openload/internal/mix"
)

// TestScenariosGRPC: a scenario of gRPC calls (keys spelled as the
// flags) beside one of HTTP requests, in one run: each server reads as
// many as its scenario's wire attempts, the gRPC scenario's result counts
// its calls by grpc-status, the HTTP one's has none, and the whole's are
// the sum (result.Union's merge).
func TestScenariosGRPC(t *testing.T) {
	s := grpcServer(t)
	protoFile, _ := grpcFiles(t, s)
	var c pathCounter
	srv := c.server(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "mix.yaml", fmt.Sprintf(`scenarios:
  - name: predict
    rate: 20
    grpc-method: %s
    proto: %s
    body: '{"id":"r{{seq}}","inputs":[1,2]}'
    header: ["x-user: u1"]
    slo: ["grpc.unavailable<=1%%"]
    url: http://%s
  - name: browse
    rate: 10
    url: %s/browse
`, grpcPredict, protoFile, s.Addr, srv.URL))
	out := filepath.Join(dir, "r.json")
	stdout, _ := runOK(t, "--scenarios", file, "-d", "1s", "-o", out)
	res := readResult(t, out)
	if len(res.Scenarios) != 2 {
		t.Fatalf("%d scenarios", len(res.Scenarios))
	}
	predict, browse := res.Scenarios[0].Result, res.Scenarios[1].Result
	if predict.Wire == nil || predict.Wire.Attempts != s.Calls.Load() || predict.Counts.Scheduled != 20 || predict.GRPC["ok"] != 20 {
		t.Errorf("predict: wire %+v, the server read %d calls, scheduled %d, grpc %v; want the server's count = attempts = 20 ok",
			predict.Wire, s.Calls.Load(), predict.Counts.Scheduled, predict.GRPC)
	}
	if browse.Wire == nil || browse.Wire.Attempts != c.count("/browse") || browse.Counts.Sent != 10 || browse.GRPC != nil {
		t.Errorf("browse: wire %+v, the server read %d, sent %d, grpc %v; want the server's count = attempts = 10, no grpc",
			browse.Wire, c.count("/browse"), browse.Counts.Sent, browse.GRPC)
	}
	if res.GRPC["ok"] != 20 || len(res.GRPC) != 1 || res.Counts.Completed != 30 {
		t.Errorf("the whole: grpc %v, completed %d; want ok 20 of 30", res.GRPC, res.Counts.Completed)
	}
	if !strings.Contains(predict.Config.Target, "/openload.test.Model/Predict") {
		t.Errorf("predict went to %s", predict.Config.Target)
	}
	wantLines(t, stdout, "protocol by scenario: predict: h2c, browse: http/1.1", "by scenario", "grpc     predict: ok ×20", "PASS  predict:grpc.unavailable")
}

// TestScenarioGRPCErrors: a gRPC scenario's mistakes are refused as the
// flags' are, at the line of the key.
func TestScenarioGRPCErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	const head = "scenarios:\n  - name: a\n    rate: 1\n    url: http://127.0.0.1:1\n"
	cases := []struct{ file, want string }{
		{write("method.yaml", head+"    grpc-method: Predict\n"), `line 5: scenario "a": --grpc-method: `},
		{write("both.yaml", head+"    grpc-method: p.S/M\n    proto: x.proto\n    protoset: x.pb\n"), `line 6: scenario "a": --proto and --protoset are exclusive`},
		{write("import.yaml", head+"    grpc-method: p.S/M\n    protoset: x.pb\n    import-path: [a, b]\n"), `line 7: scenario "a": --import-path applies to --proto`},
		{write("noproto.yaml", head+"    proto: x.proto\n"), `line 5: scenario "a": --proto applies to gRPC calls: give --grpc-method`},
		{write("stream.yaml", head+"    grpc-method: p.S/M\n    stream: true\n"), `scenario "a": --stream reads server-sent events`},
		{write("missing.yaml", head+"    grpc-method: p.S/M\n    protoset: missing.pb\n"), `line 6: scenario "a": --protoset missing.pb: `},
		{write("steps.yaml", head+"    grpc-method: p.S/M\n    steps:\n      - name: one\n"), `line 5: scenario "a": --grpc-method with steps or a conversation`},
	}
	for _, c := range cases {
		code, _, stderr := runCLI("--scenarios", c.file, "-d", "1s")
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", filepath.Base(c.file), code, first, c.want)
		}
	}
}

// TestScenarioGRPCUID: a gRPC scenario's {{uid}} is its own, as an HTTP
// scenario's: request seq of scenario i of n sends seq × n + i.
func TestScenarioGRPCUID(t *testing.T) {
	s := grpcServer(t)
	_, protoset := grpcFiles(t, s)
	o := new(loadOptions)
	fs := loadFlags(o)
	if err := parseFlags(fs, []string{"--rate", "5", "-d", "1s", "--grpc-method", grpcPredict, "--protoset", protoset, "--body", `{"id":"{{uid}}"}`, "http://" + s.Addr}); err != nil {
		t.Fatal(err)
	}
	o.targets.scope = mix.Scope{Of: 3, Index: 1} // as runScenarios sets it
	if err := o.validate(fs); err != nil {
		t.Fatal(err)
	}
	ids := grpcIDs(t, s, o.run.Bodies)
	if len(ids) != 5 {
		t.Fatalf("%d bodies, want 5", len(ids))
	}
	for seq, id := range ids {
		if want := fmt.Sprint(seq*3 + 1); id != want {
			t.Errorf("request %d: uid %s, want %s", seq, id, want)
		}
	}
}
