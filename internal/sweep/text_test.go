package sweep

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// streamPoint is a synthetic streamed point: 10 s of rate requests, all
// completed, with the given ITL p50 and, when met ≥ 0, goodput.
func streamPoint(rate, itl float64, met int64) Point {
	res := &result.Result{Elapsed: 10, Counts: result.Counts{Scheduled: int64(rate * 10), Completed: int64(rate * 10)},
		Response: result.Percentiles{P50: 400, P99: 480},
		Stream: &result.StreamResult{TTFTResponse: result.Percentiles{P99: 61.5}, ITL: result.Percentiles{P50: itl, P99: itl + 2},
			TPOT: result.Percentiles{P50: itl + 0.25}, TokensPerS: rate * 36}}
	if met >= 0 {
		res.Stream.Goodput = &result.Goodput{Met: met, PerS: float64(met) / 10}
	}
	return Point{Rate: rate, Result: res, Valid: true}
}

// TestWriteTableStream: a streamed sweep's table has the stream columns
// with each point's figures, goodput only when it was counted; a sweep
// without streams keeps its columns.
func TestWriteTableStream(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, []Point{streamPoint(10, 12.5, 90), streamPoint(20, 17.25, 150)}, 1); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"goodput/s", "tokens/s", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50",
		"9.0", "15.0", // goodput per second
		"360", "720", // tokens per second
		"61.5", "12.5", "14.5", "17.2", "19.2", "17.5", "← knee"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "resp p90") {
		t.Errorf("streamed table keeps resp p90:\n%s", out)
	}

	b.Reset()
	if err := WriteTable(&b, []Point{streamPoint(10, 12.5, -1)}, -1); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "goodput") || !strings.Contains(out, "ITL p50") {
		t.Errorf("without objectives: want ITL and no goodput column:\n%s", out)
	}

	b.Reset()
	if err := WriteTable(&b, []Point{point(10, 50, nil)}, -1); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "ITL") || !strings.Contains(out, "resp p90") {
		t.Errorf("without streams: want the request columns only:\n%s", out)
	}
}
