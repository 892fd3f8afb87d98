// Package grpctest is a grpc-go server for tests: the Model service of
// model.proto, compiled when started (no generated code), answered with
// dynamic messages, its reflection service registered. It counts the
// calls and the request messages it reads, the truth openload's counts
// are held to.
package grpctest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/openload/openload/internal/grpcmsg"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"
	v1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	v1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

//go:embed model.proto
var modelProto string

// ProtoName is model.proto's name, as WriteProto writes it.
const ProtoName = "model.proto"

// Service is model.proto's service.
const Service = "openload.test.Model"

// Reflection says which reflection services a Server registers.
type Reflection int

const (
	ReflectV1      Reflection = iota // v1 and v1alpha, as reflection.Register does
	ReflectV1Alpha                   // v1alpha only, as grpc-go before 1.57
	ReflectNone
)

// A Server is a started test server.
type Server struct {
	Addr string // host:port: HTTP/2 without TLS (h2c), or over TLS (StartTLS)
	// ClientTLS trusts a StartTLS server's certificate (for 127.0.0.1);
	// nil for h2c.
	ClientTLS *tls.Config
	File      protoreflect.FileDescriptor // model.proto, compiled
	Calls     atomic.Int64                // calls read, every method
	Messages  atomic.Int64                // request messages read, every method
	srv       *grpc.Server
	b         behavior
}

// Compile compiles model.proto.
func Compile(ctx context.Context) (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{ProtoName: modelProto}),
	})}
	files, err := c.Compile(ctx, ProtoName)
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// WriteProto writes model.proto into dir and returns its path.
func WriteProto(dir string) (string, error) {
	p := filepath.Join(dir, ProtoName)
	return p, os.WriteFile(p, []byte(modelProto), 0o644)
}

// An Option sets how a Server answers: the known answers a test holds a
// client to.
type Option func(*behavior)

type behavior struct {
	delay     time.Duration // before each unary answer
	stallOnce time.Duration // more, before the first unary answer
	exhausted int           // every n-th call answers RESOURCE_EXHAUSTED
	messages  int           // Tokens' replies
	gap       time.Duration // before each of Tokens' replies
}

// WithDelay makes Predict and Echo answer d after reading the request.
func WithDelay(d time.Duration) Option { return func(b *behavior) { b.delay = d } }

// WithStallOnce makes the first unary call wait d more (a stall: its
// response time shows it, later calls' service times do not).
func WithStallOnce(d time.Duration) Option { return func(b *behavior) { b.stallOnce = d } }

// WithExhausted makes every n-th call (by the order read, every method)
// answer RESOURCE_EXHAUSTED, a share 1/n of them.
func WithExhausted(n int) Option { return func(b *behavior) { b.exhausted = n } }

// WithStream makes Tokens send n replies, each gap after the previous
// (the first gap after the request).
func WithStream(n int, gap time.Duration) Option {
	return func(b *behavior) { b.messages, b.gap = n, gap }
}

// Start starts a server of HTTP/2 without TLS (h2c) on a loopback port;
// Close stops it.
func Start(refl Reflection, opts ...Option) (*Server, error) { return start(refl, nil, nil, opts) }

// StartTLS starts a server of HTTP/2 over TLS, its certificate a new
// self-signed one for 127.0.0.1, which ClientTLS trusts.
func StartTLS(refl Reflection, opts ...Option) (*Server, error) {
	cert, pool, err := selfSigned()
	if err != nil {
		return nil, err
	}
	return start(refl, credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, opts)
}

func start(refl Reflection, creds credentials.TransportCredentials, client *tls.Config, opts []Option) (*Server, error) {
	fd, err := Compile(context.Background())
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var sopts []grpc.ServerOption
	if creds != nil {
		sopts = append(sopts, grpc.Creds(creds))
	}
	s := &Server{Addr: ln.Addr().String(), ClientTLS: client, File: fd, srv: grpc.NewServer(sopts...)}
	for _, o := range opts {
		o(&s.b)
	}
	sd := fd.Services().ByName("Model")
	desc := grpc.ServiceDesc{ServiceName: string(sd.FullName()), HandlerType: (*any)(nil), Metadata: ProtoName}
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		switch {
		case md.IsStreamingClient():
			desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: string(md.Name()), Handler: s.clientStreamHandler(md),
				ServerStreams: md.IsStreamingServer(), ClientStreams: true})
			continue
		case md.IsStreamingServer():
			desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: string(md.Name()), Handler: s.streamHandler(md), ServerStreams: true})
			continue
		}
		desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: string(md.Name()), Handler: s.handler(md)})
	}
	s.srv.RegisterService(&desc, struct{}{})
	files := new(protoregistry.Files)
	if err := grpcmsg.Register(files, fd); err != nil {
		ln.Close()
		return nil, err
	}
	ropts := reflection.ServerOptions{Services: s.srv, DescriptorResolver: files}
	switch refl {
	case ReflectV1:
		v1.RegisterServerReflectionServer(s.srv, reflection.NewServerV1(ropts))
		v1alpha.RegisterServerReflectionServer(s.srv, reflection.NewServer(ropts))
	case ReflectV1Alpha:
		v1alpha.RegisterServerReflectionServer(s.srv, reflection.NewServer(ropts))
	}
	go s.srv.Serve(ln)
	return s, nil
}

// selfSigned makes a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "grpctest"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

// Close stops the server, ending its calls.
func (s *Server) Close() { s.srv.Stop() }

// call counts a call and says whether it is one to refuse, with its
// number (from 1).
func (s *Server) call() (int64, error) {
	n := s.Calls.Add(1)
	if s.b.exhausted > 0 && n%int64(s.b.exhausted) == 0 {
		return n, status.Error(codes.ResourceExhausted, "grpctest: every "+strconv.Itoa(s.b.exhausted)+"th call")
	}
	return n, nil
}

// wait sleeps d, or until ctx ends (the client's deadline).
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// reply is md's reply to in: in's id, and its inputs doubled.
func reply(md protoreflect.MethodDescriptor, in *dynamicpb.Message) *dynamicpb.Message {
	out := dynamicpb.NewMessage(md.Output())
	fields := md.Output().Fields()
	out.Set(fields.ByName("id"), in.Get(md.Input().Fields().ByName("id")))
	list := out.Mutable(fields.ByName("outputs")).List()
	ins := in.Get(md.Input().Fields().ByName("inputs")).List()
	for i := range ins.Len() {
		list.Append(protoreflect.ValueOfFloat32(float32(ins.Get(i).Float()) * 2))
	}
	return out
}

// handler answers md: Echo its request, Predict the request's id and its
// inputs doubled.
func (s *Server) handler(md protoreflect.MethodDescriptor) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		n, refuse := s.call()
		in := dynamicpb.NewMessage(md.Input())
		if err := dec(in); err != nil {
			return nil, err
		}
		s.Messages.Add(1)
		if refuse != nil {
			return nil, refuse
		}
		d := s.b.delay
		if n == 1 {
			d += s.b.stallOnce
		}
		if err := wait(ctx, d); err != nil {
			return nil, err
		}
		if md.Name() == "Echo" {
			return in, nil
		}
		return proto.Message(reply(md, in)), nil
	}
}

// streamHandler answers md (Tokens): WithStream's replies, gap apart.
func (s *Server) streamHandler(md protoreflect.MethodDescriptor) grpc.StreamHandler {
	return func(_ any, stream grpc.ServerStream) error {
		_, refuse := s.call()
		in := dynamicpb.NewMessage(md.Input())
		if err := stream.RecvMsg(in); err != nil {
			return err
		}
		s.Messages.Add(1)
		if refuse != nil {
			return refuse
		}
		for range s.b.messages {
			if err := wait(stream.Context(), s.b.gap); err != nil {
				return err
			}
			if err := stream.SendMsg(reply(md, in)); err != nil {
				return err
			}
		}
		return nil
	}
}

// clientStreamHandler answers md, whose requests are a stream: Sum reads
// them all and answers their count and the sum of their inputs; Chat
// (bidirectional) echoes each as it reads it. Every message read is
// counted (Messages).
func (s *Server) clientStreamHandler(md protoreflect.MethodDescriptor) grpc.StreamHandler {
	return func(_ any, stream grpc.ServerStream) error {
		_, refuse := s.call()
		var n int64
		var sum float64
		for {
			in := dynamicpb.NewMessage(md.Input())
			err := stream.RecvMsg(in)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			s.Messages.Add(1)
			n++
			ins := in.Get(md.Input().Fields().ByName("inputs")).List()
			for i := range ins.Len() {
				sum += ins.Get(i).Float()
			}
			if refuse == nil && md.IsStreamingServer() {
				if err := stream.SendMsg(in); err != nil {
					return err
				}
			}
		}
		if refuse != nil || md.IsStreamingServer() {
			return refuse
		}
		out := dynamicpb.NewMessage(md.Output())
		out.Set(md.Output().Fields().ByName("messages"), protoreflect.ValueOfInt64(n))
		out.Set(md.Output().Fields().ByName("sum"), protoreflect.ValueOfFloat64(sum))
		return stream.SendMsg(out)
	}
}
