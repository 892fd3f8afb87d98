package kube

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/openload/openload/field"
)

// The syntax Kubernetes takes for label keys and values, and for the
// names of the objects a pod refers to (apimachinery's validation, the
// same limits).
var (
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	qualifiedName    = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValue       = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// Effects are a taint's effects, as kubectl taint spells them.
var Effects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// Pair is one key=value of a label, annotation or node selector.
type Pair struct{ Key, Value string }

// Toleration tolerates one taint: Key=Value:Effect (operator Equal) or
// Key:Effect (operator Exists), as kubectl taint writes the taint.
type Toleration struct{ Key, Value, Effect string }

// subdomain reports whether s is a DNS-1123 subdomain: a name a pod may
// refer to (a Secret, a ServiceAccount, a PriorityClass).
func subdomain(s string) bool { return len(s) <= 253 && dns1123Subdomain.MatchString(s) }

// labelKey checks a label or annotation key: [prefix/]name, the prefix a
// DNS subdomain, the name at most 63 characters of letters, digits,
// '-', '_', '.', beginning and ending with a letter or digit.
func labelKey(k string) error {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		prefix, name = "", k
	} else if !subdomain(prefix) {
		return fmt.Errorf("key %q: its prefix %q is not a DNS subdomain (lower-case letters, digits, '-', '.')", k, prefix)
	}
	if len(name) > 63 || !qualifiedName.MatchString(name) {
		return fmt.Errorf("key %q: want at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit, after an optional prefix/", k)
	}
	return nil
}

// ParsePair reads "key=value"; a label's value (label true) is at most
// 63 of the characters a key's name takes, or empty.
func ParsePair(s string, label bool) (Pair, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Pair{}, fmt.Errorf("%q: want key=value", s)
	}
	if err := labelKey(k); err != nil {
		return Pair{}, err
	}
	if label && (len(v) > 63 || !labelValue.MatchString(v)) {
		return Pair{}, fmt.Errorf("%q: value %q: want at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit", s, v)
	}
	return Pair{k, v}, nil
}

// ParseToleration reads a taint as kubectl taint writes it:
// key=value:Effect or key:Effect.
func ParseToleration(s string) (Toleration, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Toleration{}, fmt.Errorf("%q: want key=value:Effect or key:Effect (Effect %s), as kubectl taint writes a taint", s, strings.Join(Effects, ", "))
	}
	t := Toleration{Effect: s[i+1:]}
	kv := s[:i]
	t.Key, t.Value, _ = strings.Cut(kv, "=")
	found := false
	for _, e := range Effects {
		found = found || e == t.Effect
	}
	if !found {
		return Toleration{}, fmt.Errorf("%q: effect %q: want %s", s, t.Effect, strings.Join(Effects, ", "))
	}
	if err := labelKey(t.Key); err != nil {
		return Toleration{}, fmt.Errorf("%q: %v", s, err)
	}
	if len(t.Value) > 63 || !labelValue.MatchString(t.Value) {
		return Toleration{}, fmt.Errorf("%q: value %q: want at most 63 letters, digits, '-', '_' or '.'", s, t.Value)
	}
	return t, nil
}

// reservedLabel reports whether a pod label key is one the Job sets
// itself: the selector the shards are spread and found by.
func reservedLabel(k string) bool {
	return k == "app.kubernetes.io/name" || k == LabelRun || strings.HasPrefix(k, "batch.kubernetes.io/") ||
		k == "job-name" || k == "controller-uid" || k == "job-completion-index"
}

// validatePlacement checks the pods' placement and identity.
func (j Job) validatePlacement() error {
	for _, s := range j.NodeSelector {
		if _, err := ParsePair(s, true); err != nil {
			return field.Errorf("NodeSelector", s, "{NodeSelector} %v", err)
		}
	}
	for _, s := range j.Tolerations {
		if _, err := ParseToleration(s); err != nil {
			return field.Errorf("Tolerations", s, "{Tolerations} %v", err)
		}
	}
	for _, s := range j.PodLabels {
		p, err := ParsePair(s, true)
		if err != nil {
			return field.Errorf("PodLabels", s, "{PodLabels} %v", err)
		}
		if reservedLabel(p.Key) {
			return field.Errorf("PodLabels", s, "{PodLabels} %q: the Job sets %s itself (its pods are found by it)", s, p.Key)
		}
	}
	for _, s := range j.PodAnnotations {
		if _, err := ParsePair(s, false); err != nil {
			return field.Errorf("PodAnnotations", s, "{PodAnnotations} %v", err)
		}
	}
	for _, s := range j.PullSecrets {
		if !subdomain(s) {
			return field.Errorf("PullSecrets", s, "{PullSecrets} %q: want a Secret's name (lower-case letters, digits, '-', '.')", s)
		}
	}
	switch {
	case j.ServiceAccount != "" && !subdomain(j.ServiceAccount):
		return field.Errorf("ServiceAccount", j.ServiceAccount, "{ServiceAccount} %q: want a ServiceAccount's name (lower-case letters, digits, '-', '.')", j.ServiceAccount)
	case j.PriorityClass != "" && !subdomain(j.PriorityClass):
		return field.Errorf("PriorityClass", j.PriorityClass, "{PriorityClass} %q: want a PriorityClass's name (lower-case letters, digits, '-', '.')", j.PriorityClass)
	}
	return nil
}

// pairs parses what validatePlacement accepted.
func pairs(ss []string, label bool) []Pair {
	out := make([]Pair, 0, len(ss))
	for _, s := range ss {
		p, _ := ParsePair(s, label)
		out = append(out, p)
	}
	return out
}

// writePlacement renders the pod spec's placement and identity: its
// service account and priority, the secrets its image is pulled with,
// the nodes it may run on, and the spread of the shards over nodes.
func (j Job) writePlacement(w func(string, ...any)) {
	if j.ServiceAccount != "" {
		w("      serviceAccountName: %s", j.ServiceAccount)
	}
	if j.PriorityClass != "" {
		w("      priorityClassName: %s", j.PriorityClass)
	}
	if len(j.PullSecrets) > 0 {
		w("      imagePullSecrets:")
		for _, s := range j.PullSecrets {
			w("        - name: %s", s)
		}
	}
	if len(j.NodeSelector) > 0 {
		w("      nodeSelector:")
		for _, p := range pairs(j.NodeSelector, true) {
			w("        %s: %s", q(p.Key), q(p.Value))
		}
	}
	if len(j.Tolerations) > 0 {
		w("      tolerations:")
		for _, s := range j.Tolerations {
			t, _ := ParseToleration(s)
			w("        - key: %s", q(t.Key))
			if t.Value != "" {
				w("          operator: Equal")
				w("          value: %s", q(t.Value))
			} else {
				w("          operator: Exists")
			}
			w("          effect: %s", t.Effect)
		}
	}
	if j.OnePerNode {
		w("      # One shard a node, or the shard waits unscheduled: a node's CPU")
		w("      # and network are not shared by two shards.")
		w("      affinity:")
		w("        podAntiAffinity:")
		w("          requiredDuringSchedulingIgnoredDuringExecution:")
		w("            - topologyKey: kubernetes.io/hostname")
		w("              labelSelector:")
		w("                matchLabels:")
		w("                  %s: %s", LabelJobName, j.Name)
		return
	}
	w("      # Shards on different nodes where the cluster has them: a node's")
	w("      # CPU and network are shared by the shards on it.")
	w("      affinity:")
	w("        podAntiAffinity:")
	w("          preferredDuringSchedulingIgnoredDuringExecution:")
	w("            - weight: 100")
	w("              podAffinityTerm:")
	w("                topologyKey: kubernetes.io/hostname")
	w("                labelSelector:")
	w("                  matchLabels:")
	w("                    %s: %s", LabelJobName, j.Name)
}

// LocalImage reports whether image names no registry host (openload:dev,
// library/x:1): its first path component has no '.' or ':' and is not
// localhost. A node asked to pull it asks Docker Hub.
func LocalImage(image string) bool {
	first, _, ok := strings.Cut(image, "/")
	if !ok {
		return true
	}
	return first != "localhost" && !strings.ContainsAny(first, ".:")
}

// imageTag is the image's tag, "latest" when it has none (as a node
// reads it); "" when it is pinned by digest.
func imageTag(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	last := image[strings.LastIndexByte(image, '/')+1:]
	if _, tag, ok := strings.Cut(last, ":"); ok {
		return tag
	}
	return "latest"
}

// ImagePolicy is the imagePullPolicy rendered, and why when it is not
// the one asked for: a local tag that is not latest gets IfNotPresent,
// so that a node uses the image loaded on it (deploy/README.md: kind,
// k3s) instead of asking a public registry for it.
func (j Job) ImagePolicy() (policy, why string) {
	if j.PullPolicy != "" || !LocalImage(j.Image) || imageTag(j.Image) == "latest" || imageTag(j.Image) == "" {
		return j.PullPolicy, ""
	}
	return "IfNotPresent", fmt.Sprintf("%s names no registry: the image loaded on each node (deploy/README.md)", j.Image)
}

// ImageWarning is what to say of an image whose pull policy would send a
// node to a public registry for a local tag; "" when none would.
func (j Job) ImageWarning() string {
	if !LocalImage(j.Image) {
		return ""
	}
	policy, _ := j.ImagePolicy()
	switch {
	case policy == "Always":
		return fmt.Sprintf("image %s names no registry and its pull policy is Always: every node will ask Docker Hub for it; load it on the nodes and use IfNotPresent, or push it to a registry and name that (deploy/README.md)", j.Image)
	case imageTag(j.Image) == "latest" && policy != "Never":
		return fmt.Sprintf("image %s names no registry and is tagged latest: a node pulls latest from Docker Hub unless told IfNotPresent or Never; tag it (openload:dev) or push it to a registry (deploy/README.md)", j.Image)
	}
	return ""
}
