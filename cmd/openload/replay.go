package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/schedule"
)

// replayOptions are the flags of a replayed schedule (--arrivals, --speed,
// --arrivals-column) and of gates that bound dwell time (--stamp-header,
// --dwell-bound).
//
// With --arrivals the file is the schedule (schedule.OpenReplay documents
// its forms; the --log of an earlier run is one, read from its scheduled_ms
// column), so --rate, --arrival, --seed and --duration are refused with it:
// the run's duration is the file's span, the offset of its last arrival
// after --speed. The count check compares the run with the file's count.
type replayOptions struct {
	arrivals string
	column   string
	speed    float64

	sched *schedule.ReplaySchedule // loaded by validate
}

// scheduleFlags registers --arrivals, --arrivals-column and --speed.
func (r *replayOptions) scheduleFlags(fs *pflag.FlagSet, b, replay fieldBinding) {
	fs.StringVar(&r.arrivals, b.bind("arrivals", "Sched"), "",
		"replay the arrival times in this `file` instead of --rate: offsets, RFC 3339 or Unix ns times, one a line, or a CSV column such as scheduled_ms of a --log; the duration is the file's span (its last arrival)")
	fs.StringVar(&r.column, replay.bind("arrivals-column", "Column"), "",
		"with --arrivals: the CSV column holding the arrival times (default scheduled_ms, else offset, offset_s, time, timestamp or ts)")
	fs.Float64Var(&r.speed, replay.bind("speed", "Speed"), 1,
		"with --arrivals: replay this many times faster; an arrival at t is sent at t ÷ speed")
}

// checkFlags registers --stamp-header (a request flag) and --dwell-bound
// (a check), bound to o.
func (r *replayOptions) checkFlags(fs *pflag.FlagSet, b fieldBinding, o *loadtest.Options) {
	inGroup(fs, groupRequest, func() {
		fs.StringVar(&o.StampHeader, b.bind("stamp-header", "StampHeader"), "",
			"send each request's scheduled time (Unix ns, wall clock) in this request header, so a gate can measure dwell from the user's arrival")
	})
	inGroup(fs, groupChecks, func() {
		fs.DurationVar(&o.DwellBound, b.bind("dwell-bound", "DwellBound"), 0,
			"count the answers (2xx but 204) whose Server-Timing dwell exceeds this, and warn when any does (implies --server-timing)")
	})
}

// validate checks the flags and loads the arrivals file into o.run.Sched,
// so that a file that cannot be read is bad input and nothing starts. A
// replay sets o.run.Schedule.Duration to the file's span (when it is > 0),
// for what shows the run's length while it runs. The values' own checks
// (the stamp header's name, the dwell bound's sign, a replay with
// --closed) are loadtest.Options.Validate's.
func (r *replayOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	if stamp := o.run.StampHeader; stamp != "" {
		for _, h := range o.headers {
			if name, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(name), stamp) {
				return fmt.Errorf("--stamp-header %s and -H %q set the same header: give one", stamp, h)
			}
		}
	}
	if fs.Changed("dwell-bound") && o.run.DwellBound == 0 { // 0 means no bound
		return errors.New("--dwell-bound must be > 0, got 0s")
	}
	if r.arrivals == "" {
		for _, name := range []string{"speed", "arrivals-column"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies to --arrivals only", name)
			}
		}
		return nil
	}
	for _, name := range []string{"rate", "arrival", "seed"} {
		if fs.Changed(name) {
			return fmt.Errorf("--arrivals and --%s are exclusive: the arrivals file says when requests are sent", name)
		}
	}
	if fs.Changed("duration") {
		return errors.New("--arrivals and --duration are exclusive: the run lasts the file's span (its last arrival ÷ --speed)")
	}
	opt := schedule.ReplayOptions{Column: r.column, Speed: r.speed}
	if err := opt.Validate(); err != nil {
		return flagError(replayFields, err)
	}
	s, err := schedule.OpenReplay(r.arrivals, opt)
	var pe *os.PathError
	switch {
	case errors.As(err, &pe) && pe.Op == "open":
		return fmt.Errorf("--arrivals %q: %v", r.arrivals, pe.Err)
	case err != nil: // names the file and the line
		return fmt.Errorf("--arrivals: %v", flagError(replayFields, err))
	}
	r.sched, o.run.Sched = s, s
	if s.Span() > 0 {
		o.run.Schedule.Duration = s.Span()
	}
	return nil
}

// name describes the schedule of an open run: the replay's, or the one spec
// describes.
func (r *replayOptions) name(spec schedule.Spec) string {
	if r.sched != nil {
		return r.sched.Name()
	}
	s, err := schedule.New(spec)
	if err != nil {
		return err.Error()
	}
	return s.Name()
}
