package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/grpcmsg"
	"github.com/openload/openload/internal/mix"
	"github.com/openload/openload/schedule"
)

// grpcOptions are the flags of a gRPC run, named as ghz names them
// (--call is --grpc-method, -i is --import-path); the message is the
// request body (--body, --body-file: ghz's -d, -D), the metadata -H (ghz
// -m), the deadline --timeout (ghz -t). internal/grpcmsg finds the method
// and encodes the message; this file reads the flags and sets the run's
// request.
type grpcOptions struct {
	method      string
	proto       string
	importPaths []string
	protoset    string
	values      string // --values, taken for the message's {{csv.…}}
	// Taken from the body flags by take, before the HTTP steps read
	// them: the message as typed, or a .jsonl file's messages.
	message []byte
	lines   [][]byte
}

// maxGRPCTemplated bounds the messages a templated --body is expanded
// into, each encoded before the run: request seq sends message seq mod
// this many.
const maxGRPCTemplated = 100_000

func (g *grpcOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&g.method, "grpc-method", "", "call this gRPC `method`, package.Service/Method (ghz's --call): the body (--body, --body-file, {{…}} values expanded per request) is its request message as JSON (a client- or bidi-streaming method's: a JSON array of messages, sent in turn), -H its metadata, --timeout its deadline; the URL is http://host:port (h2c) or https://host:port")
	fs.StringVar(&g.proto, "proto", "", "with --grpc-method: the method's .proto `file`, compiled in-process (default: ask the server's reflection service)")
	fs.StringArrayVar(&g.importPaths, "import-path", nil, "with --proto: a `dir` its imports are found under (repeatable; the .proto's own directory and the current one are searched too)")
	fs.StringVar(&g.protoset, "protoset", "", "with --grpc-method: a descriptor set `file` (protoc --include_imports -o, buf build -o) holding the method (default: ask the server's reflection service)")
}

func (g *grpcOptions) on() bool { return g.method != "" }

// take checks the gRPC flags and takes the message from o.run's body,
// once o.request and the stream flags have read it, so that the HTTP
// steps after it (a JSON body's Content-Type, {{…}} values built into a
// mix) leave it alone; finish encodes it.
func (g *grpcOptions) take(fs *pflag.FlagSet, o *loadOptions) error {
	r := &o.run
	if !g.on() {
		for _, f := range []string{"grpc-method", "proto", "import-path", "protoset"} {
			if fs.Changed(f) {
				return fmt.Errorf("--%s applies to gRPC calls: give --grpc-method package.Service/Method", f)
			}
		}
		return nil
	}
	if _, _, err := grpcmsg.ParseName(g.method); err != nil {
		return fmt.Errorf("--grpc-method: %v", err)
	}
	switch {
	case g.proto != "" && g.protoset != "":
		return errors.New("--proto and --protoset are exclusive: give one, or neither to ask the server's reflection service")
	case len(g.importPaths) > 0 && g.proto == "":
		return errors.New("--import-path applies to --proto")
	case o.targets.file != "":
		return errors.New("--grpc-method calls one method: drop --targets")
	case o.prompts.made():
		return errors.New("--grpc-method's message is --body or --body-file: drop --prompt-tokens and --dataset")
	case o.bodies.model != "" || o.bodies.extra != "":
		return errors.New("--model and --extra-body write model servers' JSON bodies: put the fields in the gRPC message (--body)")
	case r.Method != http.MethodPost && o.method != "":
		return fmt.Errorf("-m %s: a gRPC call is a POST", o.method)
	case r.Stream:
		return errors.New("--stream reads server-sent events: a gRPC call's answer is its messages")
	case fs.NArg() == 1 && templated(fs.Arg(0)) || templatedHeader(r.Header):
		return errors.New("--grpc-method: {{…}} values go in the message (--body), not in the URL or -H")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/grpc") {
		return fmt.Errorf("-H Content-Type: %s: a gRPC call is application/grpc", ct)
	}
	g.message, g.lines = r.Body, r.Bodies
	g.values, o.targets.values = o.targets.values, "" // the mix has no body to fill
	if len(g.message) == 0 {
		g.message = []byte("{}") // the empty message, as ghz sends without -d
	}
	r.Body, r.Bodies = nil, nil
	r.Method = http.MethodPost
	r.Header.Set("Content-Type", "application/grpc")
	return nil
}

// finish finds the method (its schema from --proto, --protoset or the
// server's reflection), encodes the message and sets o.run's request for
// the call, once the URL and the protocol are read.
func (g *grpcOptions) finish(ctx context.Context, o *loadOptions) error {
	if !g.on() {
		return nil
	}
	r := &o.run
	if r.URL == nil {
		return errors.New("--grpc-method needs the server's URL: http://host:port (h2c) or https://host:port")
	}
	if p := r.URL.Path; p != "" && p != "/" || r.URL.RawQuery != "" {
		return fmt.Errorf("--grpc-method: the URL is the server's, http://%s: the method names the path", r.URL.Host)
	}
	md, err := g.find(ctx, r.URL.Scheme == "https", &r.Config)
	if err != nil {
		return err
	}
	bodies, err := g.bodies(md, o)
	if err != nil {
		return fmt.Errorf("--body: %v", err)
	}
	grpcConfig(&r.Config, md, bodies)
	return nil
}

// find is the method's descriptor from its one source.
func (g *grpcOptions) find(ctx context.Context, tlsOn bool, r *engine.Config) (protoreflect.MethodDescriptor, error) {
	switch {
	case g.protoset != "":
		md, err := grpcmsg.FromProtoset(g.protoset, g.method)
		if err != nil {
			return nil, fmt.Errorf("--protoset %s: %v", g.protoset, unwrapPath(err))
		}
		return md, nil
	case g.proto != "":
		name, paths := protoSearch(g.proto, g.importPaths)
		md, err := grpcmsg.FromProto(ctx, []string{name}, paths, g.method)
		if err != nil {
			return nil, fmt.Errorf("--proto %s: %v", g.proto, err)
		}
		return md, nil
	}
	var tc *tls.Config
	if tlsOn {
		tc = &tls.Config{}
		if r.TLS != nil {
			tc = r.TLS.Clone()
		}
		tc.InsecureSkipVerify = tc.InsecureSkipVerify || r.Insecure
	}
	wait := r.Timeout
	if r.DialTimeout > 0 {
		wait = r.DialTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	md, err := grpcmsg.FromReflection(ctx, r.URL.Host, tc, g.method)
	if err != nil {
		return nil, fmt.Errorf("--grpc-method %s: %v (or describe it with --proto or --protoset)", g.method, err)
	}
	return md, nil
}

// protoSearch is how --proto's file is named to the compiler, as ghz
// does: relative to the first --import-path that holds it, or else by its
// base name in its own directory; the current directory is searched last.
func protoSearch(file string, importPaths []string) (string, []string) {
	for _, dir := range importPaths {
		if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel), append(importPaths, ".")
		}
	}
	return filepath.Base(file), append(append(importPaths, filepath.Dir(file)), ".")
}

// bodies are the framed messages: the one typed, a .jsonl file's each,
// or a templated one's expansions for the run's requests (mix's
// templates, as an HTTP body's; {{csv.…}} from --values). For a method
// whose requests are a stream each is a JSON array, one call's messages
// (grpcmsg.Request frames them into one body).
func (g *grpcOptions) bodies(md protoreflect.MethodDescriptor, o *loadOptions) ([][]byte, error) {
	r := &o.run
	if len(g.lines) > 0 {
		bodies := make([][]byte, len(g.lines))
		for i, l := range g.lines {
			if templated(string(l)) {
				return nil, errors.New("{{…}} values with a .jsonl --body-file: give one templated message with --body")
			}
			var err error
			if bodies[i], err = grpcmsg.Request(md, l); err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
		}
		return bodies, nil
	}
	var vals *mix.Values
	if g.values != "" {
		var err error
		if vals, err = mix.ReadValuesFile(g.values); err != nil {
			return nil, fileFlagError("--values", g.values, err)
		}
	}
	t, err := mix.ParseTemplate(string(g.message), vals, r.Schedule.Seed)
	if err != nil {
		return nil, err
	}
	t.In(o.targets.scope) // {{uid}}: a scenario's own (scenarios.go)
	if t.Static() {
		b, err := grpcmsg.Request(md, g.message)
		return [][]byte{b}, err
	}
	// One message per request of the schedule: its expected count, and
	// six standard deviations more for a Poisson one's (√n), so that a
	// message is not sent twice but past the cap.
	n := maxGRPCTemplated
	if e := r.Schedule.Expected(); e > 0 {
		if r.Schedule.Kind != schedule.Constant {
			e += 6 * math.Sqrt(e)
		}
		n = int(min(math.Ceil(e), maxGRPCTemplated))
	}
	return grpcmsg.Requests(md, t, n)
}

// grpcConfig sets cfg for calls of md, each sending bodies[seq mod
// len(bodies)] (framed messages): the method's path, and HTTP/2 (h2c for
// an http URL) unless --http2 or --h2c chose it. It is the one place a
// run becomes a gRPC one: engine.Config.GRPC makes every request a call
// (POST, content-type, te: trailers, grpc-timeout from --timeout: the
// engine's grpcCall) and takes the answer's grpc-status as its outcome.
func grpcConfig(cfg *engine.Config, md protoreflect.MethodDescriptor, bodies [][]byte) {
	u := *cfg.URL
	u.Path, u.RawPath = grpcmsg.Path(md), ""
	cfg.URL = &u
	cfg.GRPC, cfg.Method = true, http.MethodPost
	cfg.Body, cfg.Bodies = bodies[0], bodies
	if len(bodies) == 1 {
		cfg.Bodies = nil
	}
	if cfg.Protocol == "" || cfg.Protocol == engine.HTTP1 {
		cfg.Protocol = engine.H2C
		if u.Scheme == "https" {
			cfg.Protocol = engine.HTTP2
		}
	}
}
