package kube

// A start that waits for readiness: the Job's pods run --start-at @FILE,
// FILE a downward API projection of their own AnnotationStart. The
// runner watches the pods and, once all run, annotates them with a start
// a moment ahead (kubectl annotate, one call); the kubelet rewrites a
// downward API volume when the pod it belongs to changes, so every shard
// reads the same start within about a second of it being set. No
// ConfigMap (its volumes refresh on the kubelet's sync period, up to a
// minute), no API access from the pods, and a manifest applied by hand
// keeps its fixed START_AT.

const (
	startDir  = "/etc/openload/start"
	startFile = "at"
	startVol  = "start"
)

// barrierMount renders the container's mount of the start's volume, an
// item of its volumeMounts.
func (j Job) barrierMount(w func(string, ...any)) {
	w("            # The shared start, written by the runner once every pod runs.")
	w("            - name: %s", startVol)
	w("              mountPath: %s", startDir)
	w("              readOnly: true")
}

// barrierVolume renders the pod's downward API volume of the start, an
// item of its volumes.
func (j Job) barrierVolume(w func(string, ...any)) {
	w("        - name: %s", startVol)
	w("          downwardAPI:")
	w("            items:")
	w("              - path: %s", startFile)
	w("                fieldRef:")
	w("                  fieldPath: metadata.annotations['%s']", AnnotationStart)
}
