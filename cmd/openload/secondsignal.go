package main

import (
	"strings"
	"sync"
)

// exitNotes is what a second signal, which exits at once, reports: the
// outputs written in full by then (writeOutput notes each) and whether
// the process was only waiting for the metrics' last scrape (the
// metrics' Stop, which comes after every output).
var exitNotes struct {
	mu      sync.Mutex
	written []string // "--output r.json", "--output stdout"
	grace   bool
	left    string // what a cluster run leaves running: its Job, and how to delete it
}

// noteLeft notes what a cluster run leaves running if it exits now ("" nothing).
func noteLeft(what string) {
	exitNotes.mu.Lock()
	defer exitNotes.mu.Unlock()
	exitNotes.left = what
}

// noteWritten notes an output written in full.
func noteWritten(flag, path string) {
	if path == "" || path == "-" {
		path = "stdout"
	}
	exitNotes.mu.Lock()
	defer exitNotes.mu.Unlock()
	exitNotes.written = append(exitNotes.written, flag+" "+path)
}

// noteGrace notes that the metrics wait for their last scrape.
func noteGrace() {
	exitNotes.mu.Lock()
	defer exitNotes.mu.Unlock()
	exitNotes.grace = true
}

// secondSignal is the line a second signal prints as it exits.
func secondSignal() string {
	exitNotes.mu.Lock()
	defer exitNotes.mu.Unlock()
	if exitNotes.left != "" {
		return "openload: second signal: exiting now; left running: " + exitNotes.left
	}
	return secondSignalLine(exitNotes.written, exitNotes.grace)
}

// secondSignalLine says what was written in full (written) and what was
// not: everything when nothing was; after the outputs, during the
// metrics' grace (grace), nothing but the metrics' last scrape.
func secondSignalLine(written []string, grace bool) string {
	const head = "openload: second signal: exiting now; "
	switch {
	case len(written) == 0:
		return head + "the log holds complete lines, the result was not written"
	case grace:
		return head + "written in full: " + strings.Join(written, ", ") + "; the log holds complete lines; only the metrics' wait for a last scrape was cut short"
	default:
		return head + "written in full: " + strings.Join(written, ", ") + "; the log holds complete lines; the outputs still to come were not written"
	}
}
