package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
)

// grpcService and grpcMethod are target.proto's: the one unary method
// bench/run.sh's gRPC section calls.
const (
	grpcService = "openload.bench.Target"
	grpcMethod  = "Call"
)

// rawCodec passes messages through as bytes: the target neither decodes
// the request nor encodes a reply (the empty message is no bytes), as its
// HTTP handler discards the body and answers "ok", so that its own work
// per call is as small as per request.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(*[]byte); ok {
		return *b, nil
	}
	return nil, fmt.Errorf("target: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("target: cannot unmarshal into %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// serveGRPC serves target.proto's Call on ln with grpc-go's own HTTP/2
// server (h2c), counting each call's arrival on the same per-millisecond
// bins and in the same served count as the HTTP handler, so that
// `target lag` and `target count` on the HTTP port mean the same for a
// gRPC run. The count is taken where the handler starts, the message read.
func (s *server) serveGRPC(ln net.Listener) error {
	g := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}))
	g.RegisterService(&grpc.ServiceDesc{
		ServiceName: grpcService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: grpcMethod,
			Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				s.arr.note(time.Now())
				var in []byte
				if err := dec(&in); err != nil {
					return nil, err
				}
				s.served.Add(1)
				out := []byte{}
				return &out, nil
			},
		}},
		Metadata: "target.proto",
	}, struct{}{})
	return g.Serve(ln)
}
