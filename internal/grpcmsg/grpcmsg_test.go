package grpcmsg_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/grpcmsg"
	"github.com/openload/openload/internal/grpcmsg/grpctest"
	"github.com/openload/openload/internal/mix"
)

const predict = grpctest.Service + "/Predict"

// request is a JSON message using most of the JSON mapping: a map, an
// enum by name, a well-known type, a repeated field, an int64 as text.
const request = `{"id":"a","seq":"7","inputs":[1,2.5],"kind":"KIND_TEXT","tags":{"b":"2","a":"1"},"at":"2026-01-02T03:04:05Z"}`

func start(t *testing.T, r grpctest.Reflection) *grpctest.Server {
	t.Helper()
	s, err := grpctest.Start(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// sources finds Predict from the server's reflection, model.proto and a
// descriptor set written from it.
func sources(t *testing.T, s *grpctest.Server) map[string]protoreflect.MethodDescriptor {
	t.Helper()
	dir := t.TempDir()
	if _, err := grpctest.WriteProto(dir); err != nil {
		t.Fatal(err)
	}
	set, err := proto.Marshal(grpcmsg.Protoset(s.File))
	if err != nil {
		t.Fatal(err)
	}
	protoset := filepath.Join(dir, "model.protoset")
	if err := os.WriteFile(protoset, set, 0o644); err != nil {
		t.Fatal(err)
	}
	out := map[string]protoreflect.MethodDescriptor{}
	if out["reflection"], err = grpcmsg.FromReflection(ctx(t), s.Addr, nil, predict); err != nil {
		t.Fatal("reflection:", err)
	}
	if out["proto"], err = grpcmsg.FromProto(ctx(t), []string{grpctest.ProtoName}, []string{dir}, predict); err != nil {
		t.Fatal("proto:", err)
	}
	if out["protoset"], err = grpcmsg.FromProtoset(protoset, predict); err != nil {
		t.Fatal("protoset:", err)
	}
	return out
}

// TestSources: reflection, a .proto file and a descriptor set describe
// the same method, whose request the same JSON encodes to the same bytes.
func TestSources(t *testing.T) {
	s := start(t, grpctest.ReflectV1)
	var want *protoreflect.MethodDescriptor
	var wantBody []byte
	for name, md := range sources(t, s) {
		if got := grpcmsg.Path(md); got != "/openload.test.Model/Predict" {
			t.Errorf("%s: path %q", name, got)
		}
		body, err := grpcmsg.Request(md, []byte(request))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want == nil {
			want, wantBody = &md, body
			continue
		}
		if a, b := protodesc.ToFileDescriptorProto((*want).ParentFile()), protodesc.ToFileDescriptorProto(md.ParentFile()); !proto.Equal(a, b) {
			t.Errorf("%s: file descriptor differs:\n%v\n%v", name, a, b)
		}
		if !bytes.Equal(body, wantBody) {
			t.Errorf("%s: bytes % x, want % x", name, body, wantBody)
		}
	}
}

// TestV1Alpha: a server with only v1alpha's reflection is asked by it.
func TestV1Alpha(t *testing.T) {
	s := start(t, grpctest.ReflectV1Alpha)
	md, err := grpcmsg.FromReflection(ctx(t), s.Addr, nil, predict)
	if err != nil {
		t.Fatal(err)
	}
	if md.Input().FullName() != "openload.test.PredictRequest" {
		t.Errorf("input %s", md.Input().FullName())
	}
}

// decode unframes one request and reads it as md's input.
func decode(t *testing.T, md protoreflect.MethodDescriptor, body []byte) *dynamicpb.Message {
	t.Helper()
	msg, rest, ok, err := framing.CutGRPC(body, 0)
	if err != nil || !ok || len(rest) != 0 {
		t.Fatalf("framing: ok %v, %d bytes after, %v", ok, len(rest), err)
	}
	if int(body[1])<<24|int(body[2])<<16|int(body[3])<<8|int(body[4]) != len(body)-5 || body[0] != 0 {
		t.Fatalf("prefix % x for %d bytes", body[:5], len(body)-5)
	}
	m := dynamicpb.NewMessage(md.Input())
	if err := proto.Unmarshal(msg, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRoundTrip: the framed bytes decode, by proto.Unmarshal, to the
// message the JSON says.
func TestRoundTrip(t *testing.T) {
	fd, err := grpctest.Compile(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Services().ByName("Model").Methods().ByName("Predict")
	body, err := grpcmsg.Request(md, []byte(request))
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, md, body)
	want := dynamicpb.NewMessage(md.Input())
	if err := protojson.Unmarshal([]byte(request), want); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	f := md.Input().Fields()
	if id, seq, n := got.Get(f.ByName("id")).String(), got.Get(f.ByName("seq")).Int(), got.Get(f.ByName("inputs")).List().Len(); id != "a" || seq != 7 || n != 2 {
		t.Errorf("id %q seq %d inputs %d", id, seq, n)
	}
}

// TestTemplate: {{seq}} in the JSON is each request's own, as in an HTTP
// body.
func TestTemplate(t *testing.T) {
	fd, err := grpctest.Compile(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Services().ByName("Model").Methods().ByName("Predict")
	tmpl, err := mix.ParseTemplate(`{"id":"r{{seq}}","seq":{{seq}},"inputs":[{{rand 1 9}}]}`, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := grpcmsg.Requests(md, tmpl, 3)
	if err != nil {
		t.Fatal(err)
	}
	f := md.Input().Fields()
	for i, b := range bodies {
		m := decode(t, md, b)
		if id, seq := m.Get(f.ByName("id")).String(), m.Get(f.ByName("seq")).Int(); id != fmt.Sprint("r", i) || seq != int64(i) {
			t.Errorf("request %d: id %q seq %d", i, id, seq)
		}
		if in := m.Get(f.ByName("inputs")).List(); in.Len() != 1 || in.Get(0).Float() < 1 || in.Get(0).Float() > 9 {
			t.Errorf("request %d: inputs %v", i, in)
		}
	}
}

// TestWire: the bytes are a call the grpc-go server answers, sent as the
// engine sends it (POST, content-type application/grpc, te: trailers,
// h2c), its answer read back as JSON and its grpc-status in the trailers.
func TestWire(t *testing.T) {
	s := start(t, grpctest.ReflectV1)
	md, err := grpcmsg.FromReflection(ctx(t), s.Addr, nil, predict)
	if err != nil {
		t.Fatal(err)
	}
	body, err := grpcmsg.Request(md, []byte(`{"id":"w","inputs":[1.5]}`))
	if err != nil {
		t.Fatal(err)
	}
	answer, trailer := call(t, s, md, body)
	if st := trailer.Get("Grpc-Status"); st != "0" {
		t.Fatalf("grpc-status %q (%s)", st, trailer.Get("Grpc-Message"))
	}
	js, err := grpcmsg.Answer(md, answer)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(js), ""); got != `{"id":"w","outputs":[3]}` {
		t.Errorf("answer %s", js)
	}
	if n := s.Calls.Load(); n != 1 {
		t.Errorf("server read %d calls, want 1", n)
	}
}

// TestErrors: each mistake is one line that says what is known.
func TestErrors(t *testing.T) {
	s := start(t, grpctest.ReflectV1)
	fd, err := grpctest.Compile(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Services().ByName("Model").Methods().ByName("Predict")
	_, jsonErr := grpcmsg.Request(md, []byte(`{"id":"a","nope":1}`))
	_, typeErr := grpcmsg.Request(md, []byte(`{"seq":"x"}`))
	sum := fd.Services().ByName("Model").Methods().ByName("Sum")
	_, unaryArray := grpcmsg.Request(md, []byte(` [{"id":"a"}]`))
	_, emptyArray := grpcmsg.Request(sum, []byte(`[]`))
	_, badElem := grpcmsg.Request(sum, []byte(`[{"id":"a"},{"seq":"x"}]`))
	_, notArray := grpcmsg.Request(sum, []byte(`[{"id":"a"}`))
	_, noService := grpcmsg.FromReflection(ctx(t), s.Addr, nil, "openload.test.Nope/Predict")
	_, noMethod := grpcmsg.FromReflection(ctx(t), s.Addr, nil, grpctest.Service+"/Nope")
	_, syntax := grpcmsg.FromReflection(ctx(t), s.Addr, nil, "Predict")
	short, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	_, unreachable := grpcmsg.FromReflection(short, dead, nil, predict)
	for _, c := range []struct {
		err  error
		want string
	}{
		{jsonErr, `message does not fit openload.test.PredictRequest:`},
		{jsonErr, `unknown field "nope"`},
		{typeErr, `invalid value for int64 field seq`},
		{unaryArray, "a JSON array of messages is for a client- or bidi-streaming method: openload.test.Model.Predict takes one message"},
		{emptyArray, "an empty array: a call of openload.test.Model.Sum sends at least one message"},
		{badElem, "message 2 of the array: message does not fit openload.test.PredictRequest:"},
		{notArray, "not a JSON array of openload.test.PredictRequest messages:"},
		{noService, "unknown service openload.test.Nope (known: openload.test.Model)"},
		{noMethod, "service openload.test.Model has no method Nope (its methods: Predict, Echo, Tokens, Sum, Chat)"},
		{syntax, `method "Predict": want package.Service/Method`},
		{unreachable, "reflection at " + dead},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || strings.Contains(c.err.Error(), "\n") {
			t.Errorf("error %v, want one line with %q", c.err, c.want)
		}
	}
}

// TestTLS: reflection over TLS, the server's certificate trusted.
func TestTLS(t *testing.T) {
	s, err := grpctest.StartTLS(grpctest.ReflectV1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	md, err := grpcmsg.FromReflection(ctx(t), s.Addr, s.ClientTLS, predict)
	if err != nil {
		t.Fatal(err)
	}
	if grpcmsg.Path(md) != "/openload.test.Model/Predict" {
		t.Errorf("path %s", grpcmsg.Path(md))
	}
	if _, err := grpcmsg.FromReflection(ctx(t), s.Addr, &tls.Config{}, predict); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("untrusted certificate: error %v, want one line", err)
	}
}

// call sends body as a call of md the way the engine sends one (POST,
// content-type application/grpc, te: trailers, h2c) and returns the
// answer's bytes and trailers (its headers, for a trailers-only answer).
func call(t *testing.T, s *grpctest.Server, md protoreflect.MethodDescriptor, body []byte) ([]byte, http.Header) {
	t.Helper()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true) // h2c, with prior knowledge
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx(t), http.MethodPost, "http://"+s.Addr+grpcmsg.Path(md), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Trailer.Get("Grpc-Status") == "" { // a trailers-only answer: the status in its one HEADERS
		return answer, resp.Header
	}
	return answer, resp.Trailer
}

// TestKnownAnswers: the test server's knobs answer as they say: Tokens
// streams N replies, every n-th call is RESOURCE_EXHAUSTED (8), and a
// stalled first call takes longer than a later one.
func TestKnownAnswers(t *testing.T) {
	s, err := grpctest.Start(grpctest.ReflectNone, grpctest.WithStream(4, time.Millisecond), grpctest.WithExhausted(3),
		grpctest.WithStallOnce(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	methods := s.File.Services().ByName("Model").Methods()
	tokens, predict := methods.ByName("Tokens"), methods.ByName("Predict")
	body, err := grpcmsg.Request(predict, []byte(`{"id":"k","inputs":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, tr := call(t, s, predict, body); tr.Get("Grpc-Status") != "0" { // call 1: stalled
		t.Fatalf("call 1: %v", tr)
	}
	stalled := time.Since(start)
	start = time.Now()
	if _, tr := call(t, s, predict, body); tr.Get("Grpc-Status") != "0" {
		t.Fatalf("call 2: %v", tr)
	}
	if after := time.Since(start); after >= stalled {
		t.Errorf("the stalled call took %v, a later one %v", stalled, after)
	}
	if _, tr := call(t, s, predict, body); tr.Get("Grpc-Status") != "8" {
		t.Errorf("call 3: grpc-status %q, want 8 (RESOURCE_EXHAUSTED)", tr.Get("Grpc-Status"))
	}
	answer, tr := call(t, s, tokens, body)
	js, err := grpcmsg.Answer(tokens, answer)
	if err != nil || tr.Get("Grpc-Status") != "0" {
		t.Fatalf("Tokens: %v %v", err, tr)
	}
	if lines := strings.Split(js, "\n"); len(lines) != 4 {
		t.Errorf("Tokens: %d replies, want 4: %s", len(lines), js)
	}
	if n := s.Calls.Load(); n != 4 {
		t.Errorf("server read %d calls, want 4", n)
	}
}

// TestStreamingRequest: a client-streaming method's body is its JSON
// array's messages framed in turn, which the test server reads one by
// one (Sum answers their count and the inputs' sum); a bidi method's
// answer is its echo of each; one object is a stream of one.
func TestStreamingRequest(t *testing.T) {
	s := start(t, grpctest.ReflectNone)
	methods := s.File.Services().ByName("Model").Methods()
	sum, chat := methods.ByName("Sum"), methods.ByName("Chat")
	array := []byte(`[{"id":"a","inputs":[1]}, {"id":"b","inputs":[2,3]}, {"id":"c"}]`)
	body, err := grpcmsg.Request(sum, array)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for rest := body; len(rest) > 0; n++ {
		var ok bool
		if _, rest, ok, err = framing.CutGRPC(rest, 0); !ok || err != nil {
			t.Fatalf("message %d: %v % x", n, err, body)
		}
	}
	if n != 3 {
		t.Errorf("%d messages framed, want 3", n)
	}
	answer, tr := call(t, s, sum, body)
	js, err := grpcmsg.Answer(sum, answer)
	// protojson's output varies its spaces on purpose: compare without.
	if err != nil || tr.Get("Grpc-Status") != "0" || strings.ReplaceAll(js, " ", "") != `{"messages":"3","sum":6}` {
		t.Errorf("Sum: %s %v %v, want 3 messages summing 6", js, err, tr)
	}
	body, err = grpcmsg.Request(chat, array)
	if err != nil {
		t.Fatal(err)
	}
	answer, tr = call(t, s, chat, body)
	js, err = grpcmsg.Answer(chat, answer)
	want := `{"id":"a","inputs":[1]}` + "\n" + `{"id":"b","inputs":[2,3]}` + "\n" + `{"id":"c"}`
	if err != nil || tr.Get("Grpc-Status") != "0" || strings.ReplaceAll(js, " ", "") != want {
		t.Errorf("Chat: %s %v %v, want each message echoed", js, err, tr)
	}
	one, err := grpcmsg.Request(sum, []byte(`{"id":"a"}`))
	if err != nil || len(one) == 0 {
		t.Fatalf("one object: %v", err)
	}
	if _, rest, ok, _ := framing.CutGRPC(one, 0); !ok || len(rest) != 0 {
		t.Errorf("one object: % x, want one message", one)
	}
	if c, m := s.Calls.Load(), s.Messages.Load(); c != 2 || m != 6 {
		t.Errorf("server read %d calls, %d messages; want 2, 6", c, m)
	}
}
