package main

import (
	"strings"
	"testing"

	"github.com/openload/openload/internal/recorder"
)

// TestSniff: every kind of file openload writes besides its results is
// told from its first bytes, the stream log's and older logs' headers
// too; a result, a sweep file and a stranger's file are left to the
// readers.
func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		head string
		want *fileKind
	}{
		{recorder.LogHeader + "\n0,0.000,0.298,51.868,51.569,51.868,0.298,200,,1\n", kindRequestLog},
		{recorder.LogHeader + "," + recorder.StreamLogColumns + "\n", kindRequestLog},
		{strings.TrimSuffix(recorder.LogHeader, ",attempts") + "\r\n", kindRequestLog},
		{"#[StartTime: 1700000000.000 (seconds since epoch)]\n", kindIntervalLog},
		{"second,scheduled,skipped,sent,completed,errors,response_p99_ms\n0,20,0,20,20,0,52.1\n", kindTimelineCSV},
		{"point,probe,offered_per_s,completed_per_s\n", kindSweepCSV},
		{"       Value     Percentile TotalCount 1/(1-Percentile)\n\n", kindHGRM},
		{`{"version":1}`, nil},
		{`{"sweep_version":1}`, nil},
		{"scheduled_ms,status\n0.000,200\n", nil}, // an arrivals file of another tool
		{"", nil},
	} {
		if got := sniff([]byte(tc.head)); got != tc.want {
			t.Errorf("sniff(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}
