package kube

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/openload/openload/field"
)

// LabelRun is the label on every object a run creates (the Job, its
// pods, the ConfigMap and Secret of its files), its value the Job's
// name: `kubectl delete job,configmap,secret -l openload.dev/run=NAME`
// removes them all. The ConfigMap and Secret cannot name the Job as
// their owner when rendered: an owner reference needs the Job's UID,
// which the cluster gives only once it is created.
const LabelRun = "openload.dev/run"

// Where a shard's pod finds the files of its run, read-only.
const (
	FilesDir  = "/etc/openload/files"  // the ConfigMap's
	SecretDir = "/etc/openload/secret" // the Secret's files
)

// MaxObjectBytes is what one ConfigMap or Secret may hold (the API
// server refuses an object past 1 MiB); MaxFilesBytes leaves room in it
// for the object's own fields.
const (
	MaxObjectBytes = 1 << 20
	MaxFilesBytes  = MaxObjectBytes - 8<<10
)

// File is one file a run reads, carried into every pod: a ConfigMap's
// key, or the Secret's when it holds credentials.
type File struct {
	Key    string // its key, and its name in FilesDir or SecretDir
	Source string // where it was read from, for messages
	Data   []byte
	Secret bool
}

// SecretEnv is one value the pods take from the Secret as an environment
// variable, for Args to name as $(Name): Kubernetes expands it, so the
// value never stands in the Job's spec.
type SecretEnv struct {
	Name  string // the variable, e.g. OPENLOAD_HEADER_0
	Key   string // its key in the Secret
	Value string
}

// ConfigMapName and SecretName are the names of the objects that carry
// the Job's files and secrets.
func (j Job) ConfigMapName() string { return j.Name + "-files" }
func (j Job) SecretName() string    { return j.Name + "-secret" }

// Path is where f is in each pod.
func (f File) Path() string {
	if f.Secret {
		return SecretDir + "/" + f.Key
	}
	return FilesDir + "/" + f.Key
}

var (
	configKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// FileKey is a ConfigMap key for the file at path, read by what (a
// short word): what, '-', and the file's base name with every
// character a key cannot hold as '_'.
func FileKey(what, path string) string {
	base := path
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	var b strings.Builder
	for _, r := range base {
		if r < utf8.RuneSelf && (r == '-' || r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	key := what + "-" + b.String()
	if len(key) > 200 {
		key = key[:200]
	}
	return key
}

// text reports whether d can stand as a ConfigMap's data: UTF-8 without
// the control characters a YAML document may not hold unescaped (JSON's
// quoting escapes those below 0x20 only). Anything else goes in
// binaryData, base64.
func text(d []byte) bool {
	if !utf8.Valid(d) {
		return false
	}
	for _, r := range string(d) {
		if r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfeff {
			return false
		}
	}
	return true
}

// stored is the bytes d takes in an object: as is, or base64.
func stored(d []byte, secret bool) int {
	if secret || !text(d) {
		return base64.StdEncoding.EncodedLen(len(d))
	}
	return len(d)
}

// validateFiles checks the files and secret values: keys a ConfigMap
// takes, each once, and each object under MaxObjectBytes.
func (j Job) validateFiles() error {
	keys := map[string]bool{}
	var sizes [2]int
	for _, f := range j.Files {
		if !configKey.MatchString(f.Key) || len(f.Key) > 253 || keys[f.Key] {
			return field.Errorf("Files", f.Key, "file %q: key %q: want letters, digits, '-', '.', '_', each key once", f.Source, f.Key)
		}
		keys[f.Key] = true
		i := 0
		if f.Secret {
			i = 1
		}
		sizes[i] += stored(f.Data, f.Secret)
	}
	for _, e := range j.SecretEnv {
		if !envName.MatchString(e.Name) || !configKey.MatchString(e.Key) || keys[e.Key] {
			return field.Errorf("SecretEnv", e.Name, "secret variable %q (key %q): want a variable name and a key given once", e.Name, e.Key)
		}
		keys[e.Key] = true
		sizes[1] += base64.StdEncoding.EncodedLen(len(e.Value))
	}
	for i, kind := range []string{"ConfigMap", "Secret"} {
		if sizes[i] <= MaxFilesBytes {
			continue
		}
		// Name the largest file: the one to shrink or leave out.
		var big File
		for _, f := range j.Files {
			if f.Secret == (i == 1) && len(f.Data) > len(big.Data) {
				big = f
			}
		}
		return field.Errorf("Files", big.Source, "%q is %s: the %s that carries a run's files holds %s at most, %s in all here (put it in the image, or shorten it)",
			big.Source, mib(len(big.Data)), kind, mib(MaxFilesBytes), mib(sizes[i]))
	}
	return nil
}

// mib is n bytes for a message: "1.3 MiB", "12 KiB".
func mib(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)/1024)
}

// hasFiles reports whether the Job has files of the kind (secret or not).
func (j Job) hasFiles(secret bool) bool {
	for _, f := range j.Files {
		if f.Secret == secret {
			return true
		}
	}
	return false
}

// writeObjects renders the ConfigMap and the Secret the Job needs, each
// a document ending in "---", before the Job's: `kubectl create -f -`
// creates them first, so no pod waits for its volume.
func (j Job) writeObjects(w func(string, ...any)) {
	meta := func(kind, name string) {
		w("apiVersion: v1")
		w("kind: %s", kind)
		w("metadata:")
		w("  name: %s", name)
		if j.Namespace != "" {
			w("  namespace: %s", j.Namespace)
		}
		w("  labels:")
		w("    app.kubernetes.io/name: %s", AppName)
		w("    %s: %s", LabelRun, j.Name)
	}
	if j.hasFiles(false) {
		w("# The files the run reads, mounted read-only at %s in each pod;", FilesDir)
		w("# delete it with the Job (label %s).", LabelRun)
		meta("ConfigMap", j.ConfigMapName())
		var bin []File
		w("data:")
		for _, f := range j.Files {
			switch {
			case f.Secret:
			case text(f.Data):
				w("  %s: %s", f.Key, q(string(f.Data)))
			default:
				bin = append(bin, f)
			}
		}
		if len(bin) > 0 {
			w("binaryData:")
			for _, f := range bin {
				w("  %s: %s", f.Key, base64.StdEncoding.EncodeToString(f.Data))
			}
		}
		w("---")
	}
	if j.hasFiles(true) || len(j.SecretEnv) > 0 {
		w("# The run's credentials: the headers its pods take as environment")
		w("# variables and the files holding credentials (mounted at %s),", SecretDir)
		w("# kept out of the Job's spec; delete it with the Job (label %s).", LabelRun)
		meta("Secret", j.SecretName())
		w("type: Opaque")
		w("data:")
		for _, f := range j.Files {
			if f.Secret {
				w("  %s: %s", f.Key, base64.StdEncoding.EncodeToString(f.Data))
			}
		}
		for _, e := range j.SecretEnv {
			w("  %s: %s", e.Key, base64.StdEncoding.EncodeToString([]byte(e.Value)))
		}
		w("---")
	}
}
