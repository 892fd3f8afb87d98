package grpcmsg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/openload/openload/internal/framing"
)

// Marshal reads js, a message of type md in protobuf's JSON mapping, and
// returns its protobuf bytes. Deterministic: the same JSON gives the same
// bytes whichever source described md (maps in key order).
func Marshal(md protoreflect.MessageDescriptor, js []byte) ([]byte, error) {
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(js, m); err != nil {
		return nil, fmt.Errorf("message does not fit %s: %s", md.FullName(), oneLine(err))
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// Request is js as the body of a call of md, its messages framed
// (framing.AppendGRPC). A method that takes one message (unary, server
// streaming) takes one JSON object, and an array is refused. A method
// that takes a stream (client or bidirectional streaming) takes a JSON
// array of messages, framed in turn into one body, which the call sends
// whole and then ends its side: ghz's form of such a call, so that it
// costs the engine nothing a unary call does not. One object there is a
// stream of one message, as ghz takes it; an empty array is refused (a
// call that sends nothing measures nothing of the method).
func Request(md protoreflect.MethodDescriptor, js []byte) ([]byte, error) {
	array := bytes.HasPrefix(bytes.TrimLeft(js, " \t\r\n"), []byte("["))
	if !md.IsStreamingClient() || !array {
		if array {
			return nil, fmt.Errorf("a JSON array of messages is for a client- or bidi-streaming method: %s takes one message, give it one JSON object", md.FullName())
		}
		b, err := Marshal(md.Input(), js)
		if err != nil {
			return nil, err
		}
		return framing.AppendGRPC(make([]byte, 0, framing.GRPCPrefix+len(b)), b), nil
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(js, &msgs); err != nil {
		return nil, fmt.Errorf("not a JSON array of %s messages: %v", md.Input().FullName(), err)
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("an empty array: a call of %s sends at least one message, give the array one", md.FullName())
	}
	var body []byte
	for i, m := range msgs {
		b, err := Marshal(md.Input(), m)
		if err != nil {
			return nil, fmt.Errorf("message %d of the array: %v", i+1, err)
		}
		body = framing.AppendGRPC(body, b)
	}
	return body, nil
}

// A Template writes request seq's text: internal/mix's Template, whose
// {{seq}}, {{uid}}, {{rand A B}} and {{csv.COLUMN}} the HTTP bodies
// expand.
type Template interface {
	Append(dst []byte, seq uint64) []byte
}

// Requests are the bodies of requests 0 to n-1 of a call of md, request
// seq's being t's text for seq, as JSON, encoded and framed. The engine
// sends Bodies[seq mod n]: with n the run's count, each request sends
// its own values.
func Requests(md protoreflect.MethodDescriptor, t Template, n int) ([][]byte, error) {
	bodies := make([][]byte, n)
	var js []byte
	for seq := range n {
		js = t.Append(js[:0], uint64(seq))
		b, err := Request(md, js)
		if err != nil {
			return nil, fmt.Errorf("request %d: %v", seq, err)
		}
		bodies[seq] = b
	}
	return bodies, nil
}

// Answer reads the framed messages of an answer of md as JSON, one a
// line (protojson's compact form).
func Answer(md protoreflect.MethodDescriptor, body []byte) (string, error) {
	var lines []string
	for len(body) > 0 {
		msg, rest, ok, err := framing.CutGRPC(body, 0)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("a message cut short: %d bytes left", len(body))
		}
		m := dynamicpb.NewMessage(md.Output())
		if err := proto.Unmarshal(msg, m); err != nil {
			return "", fmt.Errorf("not a %s: %v", md.Output().FullName(), err)
		}
		js, err := protojson.Marshal(m)
		if err != nil {
			return "", err
		}
		lines = append(lines, string(js))
		body = rest
	}
	return strings.Join(lines, "\n"), nil
}

// oneLine is err's text on one line, without protojson's "proto: "
// prefix.
func oneLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "proto:")
	return strings.Join(strings.Fields(s), " ")
}
