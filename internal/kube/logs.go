package kube

import (
	"bytes"
	"errors"
)

// ErrNoResult: a log without a result in it.
var ErrNoResult = errors.New("no result in its log")

// ErrTruncated: a log whose result does not end.
var ErrTruncated = errors.New("its log holds the start of a result but not its end (cut off: the pod killed, or the log rotated)")

// ResultJSON finds the JSON result a shard wrote with --output=- in its
// pod's log. `kubectl logs` gives stdout and stderr as one stream, line
// by line, so other lines may come before, after and even inside it.
// The result is encoded with an indent: it opens with a line "{" and
// closes with a line "}", and every line between is indented. ResultJSON
// returns those lines, less any unindented line among them (stderr's),
// for result.Read to decode; ErrNoResult or ErrTruncated when there is
// none, or it does not end.
func ResultJSON(log []byte) ([]byte, error) {
	lines := bytes.SplitAfter(log, []byte("\n"))
	start := -1
	for i, l := range lines {
		if string(bytes.TrimRight(l, "\r\n")) == "{" {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, ErrNoResult
	}
	var out bytes.Buffer
	out.Write(lines[start])
	for _, l := range lines[start+1:] {
		t := bytes.TrimRight(l, "\r\n")
		switch {
		case string(t) == "}":
			out.WriteString("}\n")
			return out.Bytes(), nil
		case len(t) > 0 && t[0] == ' ':
			out.Write(t)
			out.WriteByte('\n')
		}
	}
	return nil, ErrTruncated
}
