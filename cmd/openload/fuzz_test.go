package main

import (
	"bufio"
	"bytes"
	"math"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/openload/openload/schedule"
)

// FuzzParseHeader: a -H value parseHeader accepts round-trips through
// http.Header: written as a request header and read back, it has the same
// name and value; one it refuses gets an error naming the flag and value.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"Authorization: Bearer x", "x-a:b", "X-Empty:", " Spaced :  v  v ", "bad name: v", "NoColon", "A: \x7f", "A: tab\tinside", "A: caf\xc3\xa9", ":v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := http.Header{}
		if err := parseHeader(h, s); err != nil {
			if !strings.HasPrefix(err.Error(), "-H "+strconv.Quote(s)) {
				t.Fatalf("error does not name the flag and value: %v", err)
			}
			return
		}
		if len(h) != 1 {
			t.Fatalf("%q gave %d headers", s, len(h))
		}
		var b bytes.Buffer
		if err := h.Write(&b); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\r\n")
		back, err := textproto.NewReader(bufio.NewReader(&b)).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("%q: written header does not parse: %v\n%q", s, err, b.String())
		}
		for k, vs := range h {
			got := back.Values(k)
			if len(got) != 1 || got[0] != vs[0] {
				t.Fatalf("%q: header %s %q read back as %q", s, k, vs, got)
			}
		}
	})
}

// FuzzRateDuration: a --rate / --duration pair the CLI accepts describes a
// schedule that holds between 1 and maxRequests requests and that
// schedule.New builds; a pair it refuses gets an error naming a flag.
func FuzzRateDuration(f *testing.F) {
	for _, p := range [][2]string{{"160", "10s"}, {"0.5", "1s"}, {"1e7", "0.5s"}, {"1e-9", "1h"}, {"NaN", "1s"}, {"-1", "1s"}, {"100", "-1s"}, {"3", "1ns"}, {"5000000", "1s"}, {"2e6", "3s"}, {"0x10", "1m"}, {"+Inf", "1s"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, rate, dur string) {
		var o loadOptions
		fs := loadFlags(&o)
		args := []string{"--rate", rate, "--duration", dur}
		if err := parseFlags(fs, args); err != nil {
			if !strings.Contains(err.Error(), "--rate") && !strings.Contains(err.Error(), "--duration") {
				t.Fatalf("parse error names no flag: %v", err)
			}
			return
		}
		err := o.validate(fs)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "--rate") && !strings.Contains(msg, "--duration") {
				t.Fatalf("rate %q duration %q: error names no flag: %v", rate, dur, err)
			}
			return
		}
		spec := o.run.Schedule
		n := spec.Rate * spec.Duration.Seconds()
		switch {
		case math.IsNaN(spec.Rate) || spec.Rate <= 0 || spec.Rate > maxRate:
			t.Fatalf("accepted rate %v", spec.Rate)
		case spec.Duration <= 0:
			t.Fatalf("accepted duration %v", spec.Duration)
		case n > maxRequests:
			t.Fatalf("accepted %v × %v = %v requests without --yes", spec.Rate, spec.Duration, n)
		}
		if c := schedule.ConstantCount(spec.Rate, spec.Duration); c < 1 || float64(c) > n+1 {
			t.Fatalf("%v × %v: constant schedule of %d requests", spec.Rate, spec.Duration, c)
		}
		s, err := schedule.New(spec)
		if err != nil {
			t.Fatalf("accepted pair does not build a schedule: %v", err)
		}
		if e := s.Expected(); math.Abs(e-n) > 1e-6*math.Max(1, n) {
			t.Fatalf("expected %v, rate × duration %v", e, n)
		}
		// Validating again gives the same answer.
		var o2 loadOptions
		fs2 := loadFlags(&o2)
		if err := fs2.Parse(longForm(fs2, args)); err != nil {
			t.Fatal(err)
		}
		if err := o2.validate(fs2); err != nil || o2.run.Schedule != o.run.Schedule {
			t.Fatalf("second validation differs: %v", err)
		}
	})
}
