//lint:file-ignore SA1019 grpc.reflection.v1alpha is deprecated, and is what servers without v1 (grpc-go before 1.57, many others) answer: it is the fallback.
package grpcmsg

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	v1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	v1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// FromReflection asks the reflection service of the server at addr
// (host:port; tlsConf nil: HTTP/2 without TLS) for method name's
// descriptors: grpc.reflection.v1's ServerReflectionInfo, or v1alpha's
// when the server has only that (grpc-go registered only v1alpha before
// 1.57, and many servers still do). ctx bounds the whole exchange.
func FromReflection(ctx context.Context, addr string, tlsConf *tls.Config, name string) (protoreflect.MethodDescriptor, error) {
	service, method, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if tlsConf != nil {
		creds = credentials.NewTLS(tlsConf)
	}
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("reflection at %s: %v", addr, err)
	}
	defer cc.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream
	ask, err := reflector(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("reflection at %s: %s", addr, status.Convert(err).Message())
	}
	files, err := fetch(ask, service)
	if err != nil {
		return nil, fmt.Errorf("reflection at %s: %v", addr, err)
	}
	if files == nil { // the server knows no such symbol
		names, err := list(ask)
		if err != nil {
			return nil, fmt.Errorf("reflection at %s: %v", addr, err)
		}
		return nil, unknownService(service, names)
	}
	d, err := files.FindDescriptorByName(service)
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return nil, fmt.Errorf("reflection at %s: %s is not a service", addr, service)
	}
	return methodOf(sd, method)
}

// An asker sends one reflection request and reads its answer.
type asker func(*v1.ServerReflectionRequest) (*v1.ServerReflectionResponse, error)

// reflector opens the reflection stream, v1 first. A stream's
// Unimplemented shows on its first answer, so the first request (a
// listing, which every server answers) is asked here.
func reflector(ctx context.Context, cc *grpc.ClientConn) (asker, error) {
	first := &v1.ServerReflectionRequest{MessageRequest: &v1.ServerReflectionRequest_ListServices{ListServices: "*"}}
	s, err := v1.NewServerReflectionClient(cc).ServerReflectionInfo(ctx, grpc.WaitForReady(false))
	if err != nil {
		return nil, err
	}
	ask := func(req *v1.ServerReflectionRequest) (*v1.ServerReflectionResponse, error) {
		if err := s.Send(req); err != nil {
			_, err = s.Recv() // the stream's own error
			return nil, err
		}
		return s.Recv()
	}
	if _, err = ask(first); status.Code(err) != codes.Unimplemented {
		return ask, err
	}
	// v1alpha's messages are v1's, field for field, under another
	// package: carry them across by their bytes.
	sa, err := v1alpha.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	ask = func(req *v1.ServerReflectionRequest) (*v1.ServerReflectionResponse, error) {
		var areq v1alpha.ServerReflectionRequest
		if err := convert(req, &areq); err != nil {
			return nil, err
		}
		if err := sa.Send(&areq); err != nil {
			_, err = sa.Recv()
			return nil, err
		}
		aresp, err := sa.Recv()
		if err != nil {
			return nil, err
		}
		resp := new(v1.ServerReflectionResponse)
		return resp, convert(aresp, resp)
	}
	_, err = ask(first)
	return ask, err
}

func convert(from, to proto.Message) error {
	b, err := proto.Marshal(from)
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, to)
}

// fetch asks for the file that defines symbol and every file it imports,
// and links them; nil without an error when the server knows no symbol.
func fetch(ask asker, symbol protoreflect.FullName) (*protoregistry.Files, error) {
	resp, err := ask(&v1.ServerReflectionRequest{MessageRequest: &v1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: string(symbol)}})
	if err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		if codes.Code(e.ErrorCode) == codes.NotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %s", codes.Code(e.ErrorCode), e.ErrorMessage)
	}
	got := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	take := func(resp *v1.ServerReflectionResponse) error {
		for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("a file descriptor that does not parse: %v", err)
			}
			if got[fd.GetName()] == nil {
				got[fd.GetName()] = fd
				order = append(order, fd.GetName())
			}
		}
		return nil
	}
	if err := take(resp); err != nil {
		return nil, err
	}
	// A server may send a file without the imports it sent before on
	// the same stream: ask for each one missing, by name.
	for i := 0; i < len(order); i++ {
		for _, dep := range got[order[i]].GetDependency() {
			if got[dep] != nil {
				continue
			}
			resp, err := ask(&v1.ServerReflectionRequest{MessageRequest: &v1.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, err
			}
			if e := resp.GetErrorResponse(); e != nil {
				// A well-known file the server will not give: ours is the same.
				f, err := protoregistry.GlobalFiles.FindFileByPath(dep)
				if err != nil {
					return nil, fmt.Errorf("file %s (imported by %s): %s", dep, order[i], e.ErrorMessage)
				}
				got[dep] = protodesc.ToFileDescriptorProto(f)
				order = append(order, dep)
				continue
			}
			if err := take(resp); err != nil {
				return nil, err
			}
			if got[dep] == nil {
				return nil, fmt.Errorf("file %s (imported by %s): not sent", dep, order[i])
			}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, name := range order {
		set.File = append(set.File, got[name])
	}
	return protodesc.NewFiles(set)
}

// list asks for the services' names, sorted.
func list(ask asker) ([]string, error) {
	resp, err := ask(&v1.ServerReflectionRequest{MessageRequest: &v1.ServerReflectionRequest_ListServices{ListServices: "*"}})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		if !strings.HasPrefix(s.GetName(), "grpc.reflection.") { // not what one loads
			names = append(names, s.GetName())
		}
	}
	slices.Sort(names)
	return names, nil
}
