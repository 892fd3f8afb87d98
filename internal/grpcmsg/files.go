package grpcmsg

import (
	"context"
	"fmt"
	"os"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// FromProto compiles the .proto files (protocompile, in-process: no
// protoc), their imports found under importPaths (the current directory
// when empty; google/protobuf's well-known files are built in), and
// returns method name's descriptor.
func FromProto(ctx context.Context, files, importPaths []string, name string) (protoreflect.MethodDescriptor, error) {
	if len(importPaths) == 0 {
		importPaths = []string{"."}
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths}),
	}
	compiled, err := c.Compile(ctx, files...)
	if err != nil {
		return nil, err // protocompile's: file:line:col: what
	}
	reg := new(protoregistry.Files)
	for _, f := range compiled {
		if err := Register(reg, f); err != nil {
			return nil, err
		}
	}
	return find(reg, name)
}

// Register adds f and its imports to reg, once each.
func Register(reg *protoregistry.Files, f protoreflect.FileDescriptor) error {
	if _, err := reg.FindFileByPath(f.Path()); err == nil {
		return nil
	}
	for i := range f.Imports().Len() {
		if err := Register(reg, f.Imports().Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return reg.RegisterFile(f)
}

// FromProtoset reads a descriptor set (a FileDescriptorSet, as
// `protoc --include_imports -o FILE` and `buf build -o FILE` write it) and
// returns method name's descriptor.
func FromProtoset(path, name string) (protoreflect.MethodDescriptor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a FileDescriptorSet: %v", err)
	}
	reg, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%v (a set written without the files it imports?)", err)
	}
	return find(reg, name)
}

// Protoset is the descriptor set of fd and its imports, each once,
// imports first: what `protoc --include_imports -o` writes.
func Protoset(fd protoreflect.FileDescriptor) *descriptorpb.FileDescriptorSet {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := range f.Imports().Len() {
			add(f.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(fd)
	return set
}
