package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// streamOptions are the flags of streamed answers (model servers): reading
// every body as an event stream, per-request objectives for goodput, and
// drawing a --body-file's prompts by the seed.
type streamOptions struct {
	sloRequest string
	sample     bool
}

func (s *streamOptions) flags(fs *pflag.FlagSet, b fieldBinding, r *loadtest.Options) {
	fs.BoolVar(&r.Stream, b.bind("stream", "Stream"), false, "read every response as server-sent events (TTFT, ITL, TPOT, tokens); text/event-stream answers are read so without it; the log gains first_byte_ms, first_token_ms, last_token_ms, output_tokens")
	fs.BoolVar(&s.sample, b.bind("body-sample", "BodySample"), false, "with a .jsonl --body-file: draw each request's line by --seed instead of taking them in order")
}

// objectiveFlags registers --slo-request, among the checks and objectives.
func (s *streamOptions) objectiveFlags(fs *pflag.FlagSet, b fieldBinding) {
	fs.StringVar(&s.sloRequest, b.bind("slo-request", "RequestObjectives"), "", "per-request `objectives` for goodput, e.g. 'ttft<=500ms,tpot<=50ms' (metrics: "+strings.Join(recorder.RequestMetrics, ", ")+"; ttft from the schedule); implies --stream")
}

// maxBodyLines bounds a .jsonl --body-file, which is held in memory.
const maxBodyLines = 1_000_000

// validate completes r from the stream flags; bodyFile is --body-file's
// value, read already into r.Body.
func (s *streamOptions) validate(fs *pflag.FlagSet, r *loadtest.Options, bodyFile string) error {
	if s.sloRequest != "" || fs.Changed("slo-request") {
		objs, err := recorder.ParseRequestObjectives(s.sloRequest)
		if err != nil {
			return fmt.Errorf("--slo-request: %v", err)
		}
		r.RequestObjectives, r.Stream = objs, true
	}
	ext := strings.ToLower(filepath.Ext(bodyFile))
	lines := ext == ".jsonl" || ext == ".ndjson"
	if s.sample && !lines && len(r.Bodies) == 0 {
		return errors.New("--body-sample needs a --body-file of one JSON request per line (.jsonl or .ndjson), or generated prompts")
	}
	if len(r.Bodies) > 0 { // made by --prompt-tokens or --dataset (promptflags.go)
		r.BodySample, r.BodySeed = s.sample, r.Schedule.Seed
		return nil
	}
	if !lines {
		return nil
	}
	bodies, err := jsonLines(r.Body)
	if err != nil {
		return fmt.Errorf("--body-file %q: %v", bodyFile, err)
	}
	r.Body, r.Bodies = bodies[0], bodies
	r.BodySample, r.BodySeed = s.sample, r.Schedule.Seed
	return nil
}

// jsonLines splits b into its non-blank lines, each of which must be one
// JSON value.
func jsonLines(b []byte) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), len(b)+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("line %d is not one JSON value", n)
		}
		if len(out) == maxBodyLines {
			return nil, fmt.Errorf("more than %d lines", maxBodyLines)
		}
		out = append(out, bytes.Clone(line))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no JSON line in it")
	}
	return out, nil
}

// newLog returns the per-request log writer of the run.
func newLog(r *loadtest.Options, f io.Writer) *recorder.LogWriter {
	if r.Stream {
		return recorder.NewStreamLogWriter(f)
	}
	return recorder.NewLogWriter(f)
}

// diffTTFT writes a stream run's TTFT from the send next to its TTFT from
// the schedule (openload diff with one result).
func diffTTFT(stdout, stderr io.Writer, name string, res *result.Result) int {
	send, err := summary(res, name, "ttft_service")
	if err != nil {
		return fileError(stderr, "diff", err)
	}
	sched, err := summary(res, name, "ttft_response")
	if err != nil {
		return fileError(stderr, "diff", err)
	}
	if err := report.TTFTSendVsSchedule(stdout, send, sched); err != nil {
		fmt.Fprintf(stderr, "openload: diff: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
