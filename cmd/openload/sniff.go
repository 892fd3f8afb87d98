package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// This file is the one place that tells, from its first bytes, what kind
// of file a command was given: a file openload writes that is not a JSON
// result (an interval log, the per-request log, a CSV or hgrm rendering)
// gets one line saying what it is and which command reads it, instead of
// the JSON reader's "corrupt result at byte 1".

// sniffLen is how much of a file sniff reads.
const sniffLen = 4096

// fileKind is a kind of file openload writes besides its JSON results.
type fileKind struct {
	// what the file is, after "not a result but".
	what string
	// readBy says which command reads it; NAME stands for the file's name.
	readBy string
}

var (
	kindIntervalLog = &fileKind{"an HdrHistogram interval log (as --hlog writes)",
		"'openload report NAME' reads it"}
	kindRequestLog = &fileKind{"openload's per-request log (as --log writes), a CSV line per request",
		"'openload --arrivals NAME URL' replays its arrivals; report, diff and merge read the run's -o result"}
	kindTimelineCSV = &fileKind{"a run's per-second timeline (as report --format csv writes)",
		"report, diff and merge read the -o result it was rendered from"}
	kindSweepCSV = &fileKind{"a sweep's table as CSV (as report --format csv writes)",
		"report and diff read the sweep's -o file it was rendered from"}
	kindHGRM = &fileKind{"HdrHistogram's percentile distribution (as report --format hgrm writes)",
		"HdrHistogram's plotter reads it; report, diff and merge read the -o result it was rendered from"}
)

// requestLogStart is how every per-request log's header starts: its first
// columns are fixed, and the stream log's and older logs' headers differ
// only after them (recorder.LogHeader).
var requestLogStart = strings.Join(strings.SplitN(recorder.LogHeader, ",", 5)[:4], ",") + ","

// sniff is the kind of the file that starts with head, or nil for any
// other file: a JSON result or sweep file, or something openload does not
// write, left to the reader that says what is wrong with it.
func sniff(head []byte) *fileKind {
	if result.LooksLikeIntervalLog(head) {
		return kindIntervalLog
	}
	first, _, _ := bytes.Cut(head, []byte("\n"))
	line := strings.TrimSpace(string(first))
	switch {
	case strings.HasPrefix(line, requestLogStart):
		return kindRequestLog
	case strings.HasPrefix(line, "second,scheduled,skipped,sent,"):
		return kindTimelineCSV
	case strings.HasPrefix(line, "point,probe,offered_per_s,"):
		return kindSweepCSV
	case strings.HasPrefix(strings.Join(strings.Fields(line), " "), "Value Percentile TotalCount"):
		return kindHGRM
	}
	return nil
}

// sniffFile is sniff of the file at path; nil when it cannot be read (the
// reader then says why).
func sniffFile(path string) *fileKind {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head, _ := bufio.NewReaderSize(f, sniffLen).Peek(sniffLen)
	return sniff(head)
}

// notAResult is the error for the file name of kind k given where a
// result is read: one line naming the file, what it is and what reads it.
func notAResult(name string, k *fileKind) error {
	return fmt.Errorf("%s: not a result but %s: %s", name, k.what, strings.ReplaceAll(k.readBy, "NAME", name))
}
