// Package grpcmsg describes a gRPC call without generated code: it finds
// a method's descriptors (from the server's reflection service, a .proto
// file compiled in-process, or a descriptor set), turns a request message
// given as JSON into the framed bytes a call sends (protojson and
// dynamicpb: the protobuf module's own codec, no encoder of ours), and
// reads answer messages back as JSON. What sends the bytes is the
// engine's; what names the flags is the CLI's.
package grpcmsg

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ParseName reads a fully qualified method as ghz's --call takes it,
// "pkg.Service/Method" or "pkg.Service.Method", into its service's full
// name and its own name.
func ParseName(s string) (service protoreflect.FullName, method protoreflect.Name, err error) {
	svc, m, ok := strings.Cut(s, "/")
	if !ok {
		i := strings.LastIndexByte(s, '.')
		if i < 0 {
			return "", "", fmt.Errorf("method %q: want package.Service/Method", s)
		}
		svc, m = s[:i], s[i+1:]
	}
	service, method = protoreflect.FullName(strings.TrimPrefix(svc, ".")), protoreflect.Name(m)
	if !service.IsValid() || !method.IsValid() {
		return "", "", fmt.Errorf("method %q: want package.Service/Method", s)
	}
	return service, method, nil
}

// Path is the HTTP/2 :path of a call of md: "/pkg.Service/Method".
func Path(md protoreflect.MethodDescriptor) string {
	return "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
}

// known is how many names an error lists.
const known = 5

// find looks method name up among files' services.
func find(files *protoregistry.Files, name string) (protoreflect.MethodDescriptor, error) {
	service, method, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	d, err := files.FindDescriptorByName(service)
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return nil, unknownService(service, services(files))
	}
	return methodOf(sd, method)
}

// methodOf is sd's method name, or an error listing sd's methods.
func methodOf(sd protoreflect.ServiceDescriptor, name protoreflect.Name) (protoreflect.MethodDescriptor, error) {
	if md := sd.Methods().ByName(name); md != nil {
		return md, nil
	}
	var names []string
	for i := range sd.Methods().Len() {
		names = append(names, string(sd.Methods().Get(i).Name()))
	}
	return nil, fmt.Errorf("service %s has no method %s (its methods: %s)", sd.FullName(), name, few(names))
}

// services lists the full names of files' services, sorted.
func services(files *protoregistry.Files) []string {
	var names []string
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			names = append(names, string(f.Services().Get(i).FullName()))
		}
		return true
	})
	slices.Sort(names)
	return names
}

func unknownService(service protoreflect.FullName, known []string) error {
	if len(known) == 0 {
		return fmt.Errorf("unknown service %s (none is described)", service)
	}
	return fmt.Errorf("unknown service %s (known: %s)", service, few(known))
}

// few joins the first names of names, saying how many more there are.
func few(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= known {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:known], ", "), len(names)-known)
}
