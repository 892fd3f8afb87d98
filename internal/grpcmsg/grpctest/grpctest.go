// Package grpctest is a grpc-go server for tests: the Model service of
// model.proto, compiled when started (no generated code), answered with
// dynamic messages, its reflection service registered. It counts the
// calls it reads, the truth openload's counts are held to.
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
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"
	v1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	v1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
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
	srv       *grpc.Server
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

// Start starts a server of HTTP/2 without TLS (h2c) on a loopback port;
// Close stops it.
func Start(refl Reflection) (*Server, error) { return start(refl, nil, nil) }

// StartTLS starts a server of HTTP/2 over TLS, its certificate a new
// self-signed one for 127.0.0.1, which ClientTLS trusts.
func StartTLS(refl Reflection) (*Server, error) {
	cert, pool, err := selfSigned()
	if err != nil {
		return nil, err
	}
	return start(refl, credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
}

func start(refl Reflection, creds credentials.TransportCredentials, client *tls.Config) (*Server, error) {
	fd, err := Compile(context.Background())
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	s := &Server{Addr: ln.Addr().String(), ClientTLS: client, File: fd, srv: grpc.NewServer(opts...)}
	sd := fd.Services().ByName("Model")
	desc := grpc.ServiceDesc{ServiceName: string(sd.FullName()), HandlerType: (*any)(nil), Metadata: ProtoName}
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: string(md.Name()), Handler: s.handler(md)})
	}
	s.srv.RegisterService(&desc, struct{}{})
	files := new(protoregistry.Files)
	if err := register(files, fd); err != nil {
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

func register(reg *protoregistry.Files, f protoreflect.FileDescriptor) error {
	if _, err := reg.FindFileByPath(f.Path()); err == nil {
		return nil
	}
	for i := range f.Imports().Len() {
		if err := register(reg, f.Imports().Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return reg.RegisterFile(f)
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

// handler answers md: Echo its request, Predict the request's id and its
// inputs doubled.
func (s *Server) handler(md protoreflect.MethodDescriptor) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		s.Calls.Add(1)
		in := dynamicpb.NewMessage(md.Input())
		if err := dec(in); err != nil {
			return nil, err
		}
		if md.Name() == "Echo" {
			return in, nil
		}
		out := dynamicpb.NewMessage(md.Output())
		fields := md.Output().Fields()
		out.Set(fields.ByName("id"), in.Get(md.Input().Fields().ByName("id")))
		list := out.Mutable(fields.ByName("outputs")).List()
		ins := in.Get(md.Input().Fields().ByName("inputs")).List()
		for i := range ins.Len() {
			list.Append(protoreflect.ValueOfFloat32(float32(ins.Get(i).Float()) * 2))
		}
		return proto.Message(out), nil
	}
}
