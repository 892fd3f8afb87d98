package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/schedule"
)

// shardOptions are the flags that split one schedule over several
// generators (--shard, --shard-from-env) and start them together
// (--start-at); see schedule.Shard and docs/REFERENCE.md.
type shardOptions struct {
	shard   string
	fromEnv string
	startAt string
	getenv  func(string) string // os.Getenv; tests replace it
	now     func() time.Time    // time.Now; tests replace it
	// done ends a wait for a start file (--start-at @FILE): the run's
	// context, set by the command before validate; nil waits on.
	done <-chan struct{}
}

// startFilePoll is how often a start file is read while it is empty.
const startFilePoll = 100 * time.Millisecond

// maxStartAhead bounds --start-at in the future, against a mistyped date
// that would leave openload waiting for days.
const maxStartAhead = 24 * time.Hour

func (s *shardOptions) flags(fs *pflag.FlagSet, b fieldBinding) {
	fs.StringVar(&s.shard, b.bind("shard", "Shard.Index", "Shard.Of"), "", "send shard `i/N` of the schedule: the arrivals whose index ≡ i (mod N), so that N generators together send it once (merge their results with 'openload merge')")
	fs.StringVar(&s.fromEnv, "shard-from-env", "", "like --shard, the index read from an environment variable: `VAR/N`, e.g. JOB_COMPLETION_INDEX/4 (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID/4")
	fs.StringVar(&s.startAt, b.bind("start-at", "StartAt"), "", "wait until this wall-clock `time` (RFC 3339, or Unix seconds; @FILE: once FILE holds one), then run the schedule from it; shards given the same time start together, a late one's send delay shows it")
}

// validate parses the flags into o.run.Shard and o.run.StartAt.
func (s *shardOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	getenv, now := s.getenv, s.now
	if getenv == nil {
		getenv = os.Getenv
	}
	if now == nil {
		now = time.Now
	}
	switch {
	case fs.Changed("shard") && fs.Changed("shard-from-env"):
		return errors.New("--shard and --shard-from-env are exclusive: give one")
	case fs.Changed("shard"):
		sh, err := schedule.ParseShard(s.shard)
		if err != nil {
			return fmt.Errorf("--shard %v", err)
		}
		o.run.Shard = sh
	case fs.Changed("shard-from-env"):
		sh, err := schedule.ShardFromEnv(s.fromEnv, getenv)
		if err != nil {
			return fmt.Errorf("--shard-from-env %v", err)
		}
		o.run.Shard = sh
	}
	if o.run.Shard.Enabled() && o.run.Closed {
		return errors.New("--shard splits an open schedule: --closed runs none")
	}
	if !fs.Changed("start-at") {
		return nil
	}
	text, err := s.startText()
	if err != nil {
		return err
	}
	at, err := parseStartAt(text)
	if err != nil {
		return fmt.Errorf("--start-at %q: %v", s.startAt, err)
	}
	if at.Sub(now()) > maxStartAhead {
		return fmt.Errorf("--start-at %q is more than %v ahead: a mistyped date?", s.startAt, maxStartAhead)
	}
	// A start already past is run from (its arrivals leave late, and say
	// so), but not one whose whole schedule is over: every request would
	// be due at once.
	if o.run.Schedule.Duration > 0 && at.Add(o.run.Schedule.Duration).Before(now()) {
		return fmt.Errorf("--start-at %q is past, and so is the end of its --duration %v: every request would be due at once", s.startAt, o.run.Schedule.Duration)
	}
	o.run.StartAt = at
	return nil
}

// startText is --start-at's time; for @FILE, what FILE holds once it
// holds anything: a barrier that a runner releases by writing the start
// when every shard is ready ('k8s run' writes a pod annotation that a
// downward API volume shows as a file).
func (s *shardOptions) startText() (string, error) {
	path, ok := strings.CutPrefix(s.startAt, "@")
	if !ok {
		return s.startAt, nil
	}
	for {
		b, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("--start-at @%s: %v", path, unwrapPath(err))
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
		select {
		case <-s.done:
			return "", fmt.Errorf("--start-at @%s: interrupted while waiting for the start", path)
		case <-time.After(startFilePoll):
		}
	}
}

// parseStartAt reads an RFC 3339 time or Unix seconds (fractions
// allowed).
func parseStartAt(text string) (time.Time, error) {
	text = strings.TrimSpace(text)
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return t, nil
	}
	secs, err := strconv.ParseFloat(text, 64)
	if err != nil || secs <= 0 || secs > 1e11 {
		return time.Time{}, errors.New("want an RFC 3339 time (2026-12-01T15:04:05Z) or Unix seconds (1796137445)")
	}
	whole := int64(secs)
	return time.Unix(whole, int64((secs-float64(whole))*1e9)), nil
}

// describe prefixes a schedule's name with the shard sent and the start
// waited for: "shard 1/4 of constant 400/s for 10s, starting at … (in 4.2s)".
func describeShard(name string, sh schedule.Shard, startAt time.Time) string {
	if sh.Enabled() {
		name = fmt.Sprintf("shard %s of %s", sh, name)
	}
	if !startAt.IsZero() {
		name += fmt.Sprintf(", starting at %s (in %v)", startAt.UTC().Format(time.RFC3339Nano), time.Until(startAt).Round(time.Millisecond))
	}
	return name
}
