package report_test

import (
	"strings"
	"testing"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/report"
)

// TestServerTimingStreamGolden: when a run streamed, the Server-Timing
// table sets the client's TTFT from the send beside the server's figures
// and says in one line that the header came with the head; a run that
// did not stream has neither. stream.json is a streamed run against the
// stub's chat completions (--stream, 5/s for 3 s, the streaming
// example's prompts); shard.json a plain one.
func TestServerTimingStreamGolden(t *testing.T) {
	out := text(t, "stream.json")
	golden.Check(t, "server-timing-stream.golden", out)
	for _, want := range []string{"next to the client's service time and TTFT from the send", "│ client send TTFT │", report.ServerTimingStreamNote} {
		if !strings.Contains(out, want) {
			t.Errorf("streamed run lacks %q", want)
		}
	}
	if plain := text(t, "shard.json"); strings.Contains(plain, "TTFT") || strings.Contains(plain, report.ServerTimingStreamNote) || !strings.Contains(plain, "server total") {
		t.Errorf("a run that did not stream:\n%s", plain)
	}
}
