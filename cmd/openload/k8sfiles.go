package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/openload/openload/internal/kube"
	"github.com/openload/openload/result"
)

// k8sFileFlags are the flags of a run that name a file it reads, by the
// word a file's ConfigMap key begins with: a cluster run carries each
// into its pods (kube.File) and gives them the path there.
var k8sFileFlags = map[string]string{
	"body-file": "body",
	"targets":   "targets",
	"values":    "values",
	"dataset":   "dataset",
	"arrivals":  "arrivals",
	"proto":     "proto",
	"protoset":  "protoset",
}

// k8sHeaderFlags are the flags whose values are request headers, 'Name:
// value': those that are credentials go into the Secret.
var k8sHeaderFlags = []string{"header", "metrics-push-header"}

// clusterSecretHeaders are credentials besides result's (which a result
// redacts): an API key header is common enough that a cluster run keeps
// it out of the Job's spec without --redact.
var clusterSecretHeaders = []string{"X-Api-Key"}

// carrier collects the files and the secret header values of a cluster
// run, rewriting its arguments to their places in the pods.
type carrier struct {
	secret []string // the header names that are credentials
	files  []kube.File
	env    []kube.SecretEnv
}

func newCarrier(redact []string) *carrier {
	return &carrier{secret: result.SecretHeaders(append(slices.Clone(clusterSecretHeaders), redact...)...)}
}

// isSecret reports whether a header named name is a credential.
func (c *carrier) isSecret(name string) bool {
	for _, s := range c.secret {
		if http.CanonicalHeaderKey(s) == http.CanonicalHeaderKey(strings.TrimSpace(name)) {
			return true
		}
	}
	return false
}

// holdsCredential reports whether a file names a credential header (a
// targets file's "Authorization: …", a scenario's header list, a JSON
// line's "Cookie"): it goes into the Secret, not the ConfigMap.
func (c *carrier) holdsCredential(data []byte) bool {
	low := bytes.ToLower(data)
	for _, s := range c.secret {
		n := strings.ToLower(s)
		if bytes.Contains(low, []byte(n+":")) || bytes.Contains(low, []byte(`"`+n+`"`)) {
			return true
		}
	}
	return false
}

// args rewrites pass (each --NAME=VALUE) for the pods: a file flag's
// value becomes the file's path in the pod, a credential header's value
// $(VARIABLE), taken from the Secret.
func (c *carrier) args(pass []string) ([]string, error) {
	out := make([]string, 0, len(pass))
	for _, a := range pass {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok {
			out = append(out, a)
			continue
		}
		switch what, isFile := k8sFileFlags[name]; {
		case isFile:
			data, err := c.read(name, value)
			if err != nil {
				return nil, err
			}
			if name == "targets" {
				if data, err = c.targetBodies(value, data); err != nil {
					return nil, err
				}
			}
			a = "--" + name + "=" + c.add(what, value, data)
		case isHeaderFlag(name):
			h, v, ok := strings.Cut(value, ":")
			if ok && c.isSecret(h) {
				a = "--" + name + "=" + h + ": $(" + c.addEnv(strings.TrimLeft(v, " \t")) + ")"
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func isHeaderFlag(name string) bool { return slices.Contains(k8sHeaderFlags, name) }

// read reads the file a flag names, its error in one line.
func (c *carrier) read(flag, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--%s %q: %v (a cluster run carries the file into its pods)", flag, path, unwrapPath(err))
	}
	return data, nil
}

// add carries a file read from path, and returns its path in the pods.
// The same file given twice is carried once; two files of one key get
// a number.
func (c *carrier) add(what, path string, data []byte) string {
	key := kube.FileKey(what, path)
	for n := 2; ; n++ {
		i := -1
		for j, f := range c.files {
			if f.Key == key {
				i = j
			}
		}
		if i < 0 {
			break
		}
		if c.files[i].Source == path && bytes.Equal(c.files[i].Data, data) {
			return c.files[i].Path()
		}
		key = kube.FileKey(what+strconv.Itoa(n), path)
	}
	f := kube.File{Key: key, Source: path, Data: data, Secret: c.holdsCredential(data)}
	c.files = append(c.files, f)
	return f.Path()
}

// addEnv carries a credential in the Secret and returns the variable
// the pods find it in.
func (c *carrier) addEnv(value string) string {
	n := len(c.env)
	e := kube.SecretEnv{Name: fmt.Sprintf("OPENLOAD_HEADER_%d", n), Key: fmt.Sprintf("header-%d", n), Value: value}
	c.env = append(c.env, e)
	return e.Name
}

// targetBodies carries the body files a targets file names on its @path
// lines (vegeta's HTTP format; a relative path is the working
// directory's, as the run reads it) and returns the file with their
// paths in the pods; every other byte as it was.
func (c *carrier) targetBodies(path string, data []byte) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if len(t) < 2 || t[0] != '@' {
			continue
		}
		body := string(t[1:])
		b, err := os.ReadFile(body)
		if err != nil {
			return nil, fmt.Errorf("--targets %q: body file %q: %v (a cluster run carries it into its pods)", path, body, unwrapPath(err))
		}
		end := l[len(bytes.TrimRight(l, "\r\n")):]
		lines[i] = append([]byte("@"+c.add("body", body, b)), end...)
	}
	return bytes.Join(lines, nil), nil
}
