package result_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

func TestResultCheck(t *testing.T) {
	r := &result.Result{Checks: []result.Check{{Name: "schedule", Severity: "pass"}, {Name: "timeline", Severity: "warn"}}}
	if c, ok := r.Check("timeline"); !ok || c.Severity != "warn" {
		t.Errorf("timeline: %+v %v", c, ok)
	}
	if _, ok := r.Check("nope"); ok {
		t.Error("found a check that is not there")
	}
}

// oldPrefix starts an old-form string: "HIST" base64-encoded.
const oldPrefix = "SElTV"

// oldForm is how results stored a histogram before the standard form: the
// standard string base64-encoded once more.
func oldForm(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// standardResult is a filled result with every kind of histogram: the
// three, the corrected one and a Server-Timing metric's.
func standardResult(t testing.TB) *result.Result {
	r := recorder.New(nil)
	r.Correct(10 * time.Millisecond)
	for i := range 5 {
		d := time.Duration(i+1) * time.Millisecond
		rec := recorder.Record{Seq: uint64(i), Scheduled: d, Sent: d, Done: 3 * d, WasSent: true, Outcome: recorder.Completed, Status: 200, Attempts: 1}
		rec.Timings[0], rec.NTimings = recorder.Timing{Name: "model", Dur: d}, 1
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	res := &result.Result{Tool: "openload", Counts: result.Counts{Expected: 5}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	return res
}

// histogramStrings lists a result's histogram strings by name.
func histogramStrings(res *result.Result) map[string]*string {
	m := map[string]*string{"response": &res.Histograms.Response, "service": &res.Histograms.Service,
		"send_delay": &res.Histograms.SendDelay, "corrected": &res.Histograms.Corrected}
	for i := range res.ServerTiming {
		m["server_timing:"+res.ServerTiming[i].Name] = &res.ServerTiming[i].Histogram
	}
	return m
}

// TestHistogramStandardForm: results store HdrHistogram's standard string,
// which hdrhistogram.Decode reads as is; results written in the old
// double-base64 form still read, and come back in the standard form with
// the same histograms.
func TestHistogramStandardForm(t *testing.T) {
	res := standardResult(t)
	strs := histogramStrings(res)
	if len(strs) != 5 || *strs["corrected"] == "" || *strs["server_timing:model"] == "" {
		t.Fatalf("want five histograms, got %v", strs)
	}
	want := map[string]string{}
	for name, s := range strs {
		if !strings.HasPrefix(*s, "HISTFAAA") {
			t.Errorf("%s: %.20s…, want HdrHistogram's HISTFAAA…", name, *s)
		}
		if _, err := hdrhistogram.Decode([]byte(*s)); err != nil {
			t.Errorf("%s: HdrHistogram's decoder refuses it: %v", name, err)
		}
		want[name] = *s
		*s = oldForm(*s)
		if !strings.HasPrefix(*s, oldPrefix) {
			t.Fatalf("%s: old form starts %.8s", name, *s)
		}
	}
	var b bytes.Buffer
	if err := result.Write(&b, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(&b, "old.json")
	if err != nil {
		t.Fatal(err)
	}
	got := histogramStrings(back)
	for name, s := range want {
		if *got[name] != s {
			t.Errorf("%s: read back as %.20s…, want the standard form", name, *got[name])
		}
		oldH, err := result.DecodeHistogram(oldForm(s))
		if err != nil {
			t.Fatalf("%s: old form: %v", name, err)
		}
		newH, err := result.DecodeHistogram(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !oldH.Equals(newH) || newH.TotalCount() == 0 {
			t.Errorf("%s: old and standard forms decode differently (%d, %d values)", name, oldH.TotalCount(), newH.TotalCount())
		}
	}
	for _, m := range result.MetricNames(func(m result.Metric) bool { return m.Histogram && m.Samples != result.OfStreams }) {
		if _, err := back.Histogram(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// TestOldFormErrors: an old-form string that is not base64, or unwraps to
// something that is not a histogram, is kept as it is by ReadResult and
// refused when decoded.
func TestOldFormErrors(t *testing.T) {
	for _, s := range []string{oldPrefix + "!!!notbase64", oldForm("HISTnot base64 text"), oldForm("HISTFAAAAQ==")} {
		in := fmt.Sprintf(`{"version":1,"histograms":{"response":%q}}`, s)
		res, err := result.Read(strings.NewReader(in), "x.json")
		if err != nil {
			t.Fatal(err)
		}
		if unwrapped, _ := base64.StdEncoding.DecodeString(s); res.Histograms.Response != s && res.Histograms.Response != string(unwrapped) {
			t.Errorf("%q read as %q", s, res.Histograms.Response)
		}
		if _, err := res.Histogram("response"); err == nil || !strings.HasPrefix(err.Error(), "response histogram: ") {
			t.Errorf("%q: decoded, or error %v", s, err)
		}
	}
}

// TestReadOtherJSON: JSON of another shape is not an openload result, said
// in one line naming the file and, in JSON's words, what is where; no Go
// type reaches the message. Syntax errors and truncation keep their form.
func TestReadOtherJSON(t *testing.T) {
	for in, want := range map[string]string{
		`[1, 2]`:          "x.json: not an openload result: the file holds a JSON array, a result is an object",
		`"run"`:           "x.json: not an openload result: the file holds a JSON string, a result is an object",
		`{"version":"1"}`: "x.json: not an openload result: version is a JSON string, where a result has a whole number",
		`{"version":1,"counts":{"scheduled":1.5}}`: "x.json: not an openload result: counts.scheduled is a JSON number 1.5, where a result has a whole number",
		`{"version":1,"counts":[]}`:                "x.json: not an openload result: counts is a JSON array, where a result has an object",
		`{"version":1,`:                            "x.json: truncated result: unexpected EOF",
		`#[StartTime: 1]`:                          "x.json: corrupt result at byte 1: invalid character '#' looking for beginning of value",
	} {
		_, err := result.Read(strings.NewReader(in), "x.json")
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", in, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestLooksLikeIntervalLog(t *testing.T) {
	for in, want := range map[string]bool{
		"#[Histogram log format version 1.3]\n#[StartTime: 1 (seconds since epoch)]\n":      true,
		"#[Logged with jHiccup version 2.0.10]\n#[Histogram log format version 1.2]\n":      true,
		"#[StartTime: 1796124423 (seconds since epoch), 2026-12-01T11:27:03Z]\n":            true,
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`: true,
		"#[BaseTime: 1 (seconds since epoch)]":                                              true,
		"{\n  \"version\": 1,\n":                                                            false,
		"#just a comment\nTag=response,0.0,1.0,0.1,HIST\n":                                  false,
		"":                                 false,
		"garbage\n#[StartTime: 1]\n":       false,
		" #[Histogram log format version ": false,
	} {
		if got := result.LooksLikeIntervalLog([]byte(in)); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
