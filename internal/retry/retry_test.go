package retry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/recorder"
)

// The backoff waits are a pure function of (seed, request, retry) and lie
// in the documented ranges.
func TestWait(t *testing.T) {
	p := Policy{Backoff: 100 * time.Millisecond, Seed: 3}
	for i := range 12 {
		b := p.Base(i)
		if want := 100 * time.Millisecond << min(i, 10); b != want {
			t.Errorf("Base(%d) = %v, want %v", i, b, want)
		}
		for seq := range uint64(200) {
			for _, j := range Jitters {
				p.Jitter = j
				w := p.Wait(seq, i)
				lo, hi := time.Duration(0), b
				switch j {
				case JitterEqual:
					lo = b / 2
				case JitterNone:
					lo, hi = b, b+1
				}
				if w < lo || w >= hi {
					t.Errorf("%s jitter: Wait(%d, %d) = %v outside [%v, %v)", j, seq, i, w, lo, hi)
				}
				if w != p.Wait(seq, i) {
					t.Errorf("%s jitter: Wait(%d, %d) not reproducible", j, seq, i)
				}
			}
		}
	}
	// Full jitter: the mean of 2000 draws of uniform [0, 1 s) is 0.5 s with
	// a standard error of 0.289/√2000 = 6.5 ms; 5 SE is 32 ms.
	p = Policy{Backoff: time.Second, Seed: 1}
	var sum time.Duration
	for seq := range uint64(2000) {
		sum += p.Wait(seq, 0)
	}
	if mean := sum / 2000; mean < 468*time.Millisecond || mean > 532*time.Millisecond {
		t.Errorf("mean full-jitter wait %v, want 500 ms ± 32 ms", mean)
	}
	q := p
	q.Seed = 2
	same := 0
	for seq := range uint64(100) {
		if p.Wait(seq, 0) == q.Wait(seq, 0) {
			same++
		}
	}
	if same > 1 {
		t.Errorf("seeds 1 and 2 gave %d equal waits of 100", same)
	}
}

func TestParseOn(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"429,503", "429,503", ""},
		{" 503 , refused,RESET,429,503", "503,429,refused,reset", ""},
		{"timeout,tls,other", "timeout,tls,other", ""},
		{"", "", "empty list"},
		{"429,,503", "", "empty item"},
		{"42", "", `"42" is not an HTTP status (100–599)`},
		{"600", "", `"600" is not an HTTP status`},
		{"4xx", "", `"4xx" is not an HTTP status`},
		{"unfinished", "", `"unfinished" is neither a status nor an error kind`},
		{"bogus", "", `"bogus" is neither`},
	} {
		on, err := ParseOn(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseOn(%q): error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("ParseOn(%q): %v", tc.in, err)
		case tc.err == "" && on.String() != tc.want:
			t.Errorf("ParseOn(%q) = %q, want %q", tc.in, on, tc.want)
		}
	}
	on, _ := ParseOn("429,reset")
	for _, tc := range []struct {
		r    recorder.Record
		want bool
	}{
		{recorder.Record{Outcome: recorder.Completed, Status: 429}, true},
		{recorder.Record{Outcome: recorder.Completed, Status: 503}, false},
		{recorder.Record{Outcome: recorder.Failed, Kind: recorder.KindReset}, true},
		{recorder.Record{Outcome: recorder.Failed, Kind: recorder.KindRefused}, false},
		{recorder.Record{Outcome: recorder.Unfinished, Kind: recorder.KindUnfinished}, false},
	} {
		if got := on.Match(&tc.r); got != tc.want {
			t.Errorf("Match(%+v) = %v", tc.r, got)
		}
	}
}

func TestValidate(t *testing.T) {
	on, _ := ParseOn("429")
	ok := Policy{On: on, Retries: 1, Backoff: time.Second, Budget: 0.1, MinPerSec: 10, Window: 10 * time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := ok.String(); got != "up to 1 retry on 429, backoff 1s full jitter, budget 10% + 10/s over 10s" {
		t.Errorf("String() = %q", got)
	}
	for _, tc := range []struct {
		set   func(*Policy)
		field string
		want  string
	}{
		{func(r *Policy) { r.Retries = 101 }, "Retries", "Retries must be between 0 and 100, got 101"},
		{func(r *Policy) { r.Backoff = -1 }, "Backoff", "Backoff must be ≥ 0, got -1ns"},
		{func(r *Policy) { r.Jitter = "half" }, "Jitter", `Jitter "half" is unknown (known: full, equal, none)`},
		{func(r *Policy) { r.Budget = 1.5 }, "Budget", "Budget must be between 0 and 1, got 1.5"},
		{func(r *Policy) { r.Budget = -0.1 }, "Budget", "Budget must be between 0 and 1, got -0.1"},
		{func(r *Policy) { r.MinPerSec = -1 }, "MinPerSec", "MinPerSec must be a finite number ≥ 0, got -1"},
		{func(r *Policy) { r.Window = 0 }, "Window", "Window must be > 0, got 0s"},
		{func(r *Policy) { r.MinPerSec = 0 }, "MinPerSec",
			"MinPerSec × Window must be ≥ 1 (the burst of retries the budget allows), got 0/s × 10s"},
	} {
		r := ok
		tc.set(&r)
		err := r.Validate()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != tc.field || err.Error() != tc.want {
			t.Errorf("%+v: %v (%T), want %s: %q", r, err, err, tc.field, tc.want)
		}
	}
	// A policy that retries nothing is off and valid whatever else it says.
	if err := (Policy{Budget: 7}).Validate(); err != nil {
		t.Errorf("disabled policy: %v", err)
	}
	// Its count of retries is checked all the same: -1 is not "off".
	if err := (Policy{Retries: -1}).Validate(); err == nil || err.Error() != "Retries must be between 0 and 100, got -1" {
		t.Errorf("Retries -1: %v", err)
	}
}
