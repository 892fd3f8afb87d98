package main

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestGRPCCounted: each call of target.proto's method is counted as a
// request and as an arrival, as an HTTP request is.
func TestGRPCCounted(t *testing.T) {
	s := &server{}
	s.arr.reset(time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // ends serveGRPC's Serve
	go s.serveGRPC(ln)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	const calls = 5
	for range calls {
		in := []byte{0x0a, 0x02, 'r', '1'} // Request{id: "r1"}
		var out []byte
		if err := cc.Invoke(context.Background(), "/"+grpcService+"/"+grpcMethod, &in, &out); err != nil {
			t.Fatal(err)
		}
		if len(out) != 0 {
			t.Fatalf("reply %x, want the empty message", out)
		}
	}
	if n := s.served.Load(); n != calls {
		t.Fatalf("served %d, want %d", n, calls)
	}
	var got int64
	for i := range s.arr.bins {
		got += int64(s.arr.bins[i].Load())
	}
	if got != calls {
		t.Fatalf("arrivals %d, want %d", got, calls)
	}
	var none []byte
	if err := cc.Invoke(context.Background(), "/"+grpcService+"/Other", &none, &none); err == nil {
		t.Fatal("an unknown method answered")
	}
}
