package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

func TestStreamLines(t *testing.T) {
	var b bytes.Buffer
	if err := StreamLines(&b, &result.Result{}); err != nil || b.Len() != 0 {
		t.Errorf("no stream: %q %v", b.String(), err)
	}
	b.Reset()
	if err := StreamLines(&b, &result.Result{Stream: &result.StreamResult{}}); err != nil {
		t.Fatal(err)
	}
	// The hint names what each format is read for, and each server's knob.
	for _, want := range []string{`"stream": true`, "choices[0].delta.content", "NDJSON", "message.content", `"stream": false`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("a stream run without tokens lacks %q: %q", want, b.String())
		}
	}
	b.Reset()
	res := &result.Result{
		Timeline: []result.Second{{Tokens: 5}, {Tokens: 9}, {Tokens: 1}},
		Stream: &result.StreamResult{TTFTResponse: result.Percentiles{Count: 3, P99: 900}, TTFTService: result.Percentiles{Count: 3, P99: 50},
			OutputTokens: 15, TokensPerS: 5, Goodput: &result.Goodput{Objectives: "ttft<=500ms", Met: 1, PerS: 0.33, Throughput: 1, MetFraction: 1.0 / 3}},
	}
	if err := StreamLines(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TTFT from schedule │ ", "900.000", "15 output tokens · 5.0/s", "min 1, median 5, max 9", "goodput  0.33 req/s met ttft<=500ms (1 requests, 33.3 % of scheduled) · throughput 1.00 req/s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	// A result without the first answer token's figures (written before
	// they were kept) shows none; one with them shows both sides.
	if strings.Contains(b.String(), "TTFA") {
		t.Errorf("TTFA rows without TTFA data:\n%s", b.String())
	}
	b.Reset()
	res.Stream.TTFAResponse, res.Stream.TTFAService = result.Percentiles{Count: 3, P99: 1300}, result.Percentiles{Count: 3, P99: 450}
	if err := StreamLines(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TTFA from schedule │ ", "1300.000", "TTFA from send     │ ", "450.000", "TTFA = first answer token"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}
