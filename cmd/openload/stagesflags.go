package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/schedule"
)

// stagesOptions are the flags of a time-varying schedule: --stages (k6's
// ramping arrival rate) and --burstiness (gamma gaps' shape).
type stagesOptions struct {
	stages  string
	repeats int // --repeats: runs of the same schedule (repeats.go); per probe with sweep --search
}

// flags registers --stages, --burstiness and --warmup, bound to spec and
// warmup.
func (s *stagesOptions) flags(fs *pflag.FlagSet, b fieldBinding, spec *schedule.Spec, warmup *time.Duration) {
	fs.IntVar(&s.repeats, "repeats", 1,
		"run the schedule this many times and report each headline figure's median and spread (with sweep --search: runs per probe)")
	fs.DurationVar(warmup, b.bind("warmup", "Warmup"), 0,
		"send and account for the requests of the first `duration`, but keep them out of the headline figures and objectives (reported on their own line)")
	fs.StringVar(&s.stages, b.bind("stages", "Schedule.Stages"), "",
		"ramp the rate in `STAGES` DURATION:RATE,… (e.g. 30s:100,1m:100,30s:0), each stage linear from the previous rate (--rate, default 0) to its own; replaces --duration")
	fs.Float64Var(&spec.Burstiness, b.bind("burstiness", "Schedule.Burstiness"), 0, paramUsage("Burstiness")) // processflags.go
}

// validate parses --stages into spec (the duration becomes the stages'
// sum) and refuses what does not go with it. The values are checked by
// schedule.Spec.Validate.
func (s *stagesOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	switch {
	case s.repeats < 1:
		return fmt.Errorf("--repeats must be ≥ 1, got %d", s.repeats)
	case s.repeats > 1 && o.run.Closed:
		return errors.New("--repeats applies to open runs only")
	case s.repeats > 1 && (o.logFile != "" || o.hlog != ""):
		return errors.New("--repeats: --log and --hlog hold one run; the -o file holds every run")
	case s.repeats > 1 && o.output == "-":
		return errors.New("--repeats: -o - would mix the runs' results with the report; give a file")
	}
	if s.stages == "" {
		if fs.Changed("stages") {
			return errors.New("--stages is empty: want DURATION:RATE[,DURATION:RATE…], e.g. 30s:100,1m:100,30s:0")
		}
		return nil
	}
	for _, name := range []string{"duration", "arrivals", "closed"} {
		if fs.Changed(name) {
			return fmt.Errorf("--stages and --%s are exclusive: the stages say when requests are sent, and for how long", name)
		}
	}
	st, err := schedule.ParseStages(s.stages)
	if err != nil {
		return fmt.Errorf("--stages %q: %v", s.stages, err)
	}
	for i, x := range st {
		if x.Target > maxRate {
			return fmt.Errorf("--stages %q: stage %d's rate %v is absurd: at most %d per second", s.stages, i+1, x.Target, maxRate)
		}
	}
	spec := &o.run.Schedule
	spec.Stages, spec.Duration = s.stages, schedule.StagesDuration(st)
	return nil
}
