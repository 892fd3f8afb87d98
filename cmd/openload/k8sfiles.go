package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

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
	slos   []string // a scenarios file's objectives, NAME:… (scenarioFiles)
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
		case name == "scenarios":
			data, err := c.read(name, value)
			if err != nil {
				return nil, err
			}
			if data, err = c.scenarioFiles(value, data); err != nil {
				return nil, err
			}
			a = "--" + name + "=" + c.add("scenarios", value, data)
		case isHeaderFlag(name):
			h, v, ok := strings.Cut(value, ":")
			if ok && c.isSecret(h) {
				a = "--" + name + "=" + h + ": $(" + c.addEnv(strings.TrimLeft(v, " \t")) + ")"
			}
		}
		out = append(out, a)
	}
	// After the command line's own, as a local run orders them.
	for _, slo := range c.slos {
		out = append(out, "--slo="+slo)
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

// scenarioFiles carries the files a scenarios file names (its scenarios'
// keys that are file flags, and a conversation's dataset; a relative path
// is the working directory's, as a local run reads it) and returns the
// file with their paths in the pods, every other key as it was.
//
// The paths are rewritten rather than the files laid out for them to
// resolve: a ConfigMap's keys are flat, and a scenario may name an
// absolute path, a ../ one, or two files of one base name; rewritten,
// each file has one key by the rule of the command line's files
// (carrier.add), and the file the pods read is there to see in the
// ConfigMap.
//
// Its scenarios' objectives (slo) move to the Job's arguments, each
// --slo=NAME:…, which the pods read as they read the file's: so 'k8s
// collect', which reads them from the Job's spec, judges the merge by
// them as 'k8s run' does. The file was checked (buildScenarios) before.
func (c *carrier) scenarioFiles(path string, data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("--scenarios %q: not YAML: %v", path, err)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		list := root.Content[i+1]
		for j, sc := range list.Content {
			if list.Kind == yaml.MappingNode {
				if j%2 == 0 {
					continue // a scenario's name, as k6 keys them
				}
				if err := c.scenario(path, list.Content[j-1].Value, sc); err != nil {
					return nil, err
				}
			} else if err := c.scenario(path, "", sc); err != nil {
				return nil, err
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s, carried by openload k8s: the files it names are in %s (or %s)\n", path, kube.FilesDir, kube.SecretDir)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// scenario carries the files of one scenario's node sc (named name, or
// by its name key) and takes its objectives out of it.
func (c *carrier) scenario(path, name string, sc *yaml.Node) error {
	if sc.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(sc.Content); j += 2 {
		if k := sc.Content[j]; k.Value == "name" && name == "" {
			name = sc.Content[j+1].Value
		}
	}
	var keep []*yaml.Node
	for j := 0; j+1 < len(sc.Content); j += 2 {
		k, v := sc.Content[j], sc.Content[j+1]
		at := func(err error) error {
			return fmt.Errorf("--scenarios %q: line %d: scenario %q: %v", path, k.Line, name, err)
		}
		switch what, isFile := k8sFileFlags[k.Value]; {
		case isFile:
			if err := c.scenarioFile(k.Value, what, v); err != nil {
				return at(err)
			}
		case k.Value == "conversation" && v.Kind == yaml.MappingNode:
			for m := 0; m+1 < len(v.Content); m += 2 {
				if v.Content[m].Value == "dataset" {
					if err := c.scenarioFile("dataset", "dataset", v.Content[m+1]); err != nil {
						return at(err)
					}
				}
			}
		case k.Value == "import-path":
			return at(fmt.Errorf("import-path does not apply to a cluster run: %s", k8sRefused["import-path"]))
		case k.Value == "slo":
			for _, s := range scalars(v) {
				c.slos = append(c.slos, name+":"+s.Value)
			}
			continue
		}
		keep = append(keep, k, v)
	}
	sc.Content = keep
	return nil
}

// scenarioFile carries the file (or each of the list of files) a
// scenario's key names, read as flag reads it, and names it there by its
// path in the pods.
func (c *carrier) scenarioFile(flag, what string, v *yaml.Node) error {
	for _, s := range scalars(v) {
		data, err := os.ReadFile(s.Value)
		if err != nil {
			return fmt.Errorf("%s %q: %v (a cluster run carries the file into its pods)", flag, s.Value, unwrapPath(err))
		}
		if flag == "targets" {
			if data, err = c.targetBodies(s.Value, data); err != nil {
				return err
			}
		}
		s.Value = c.add(what, s.Value, data)
	}
	return nil
}

// scalars are a YAML value's scalars: the value, or a list's items.
func scalars(v *yaml.Node) []*yaml.Node {
	switch v.Kind {
	case yaml.AliasNode:
		return scalars(v.Alias)
	case yaml.ScalarNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, x := range v.Content {
			out = append(out, scalars(x)...)
		}
		return out
	}
	return nil
}
