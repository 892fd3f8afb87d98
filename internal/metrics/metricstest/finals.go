// Package metricstest holds what the tests of openload's live metrics
// share: which value each served series must end at, read from the run's
// result. Tests in internal/metrics (a scrape) and cmd/openload (a real
// Prometheus, scraping and remote-written) hold the same table against
// different judges, so it has one home here.
package metricstest

import (
	"fmt"

	"github.com/openload/openload/result"
)

// Finals maps each counter and gauge a finished run serves, by name and
// without labels, to the value res says it must end at. A result without
// a wire section gives 0 for its series.
func Finals(res *result.Result) map[string]int64 {
	c := res.Counts
	m := map[string]int64{
		"openload_requests_scheduled_total":    c.Scheduled,
		"openload_requests_sent_total":         c.Sent,
		"openload_requests_completed_total":    c.Completed,
		"openload_requests_failed_total":       c.Errors,
		"openload_requests_timed_out_total":    c.Timeouts,
		"openload_requests_unfinished_total":   c.Unfinished,
		"openload_requests_in_flight":          0,
		"openload_requests_waiting":            0,
		"openload_run_finished":                1,
		"openload_requests_limit_waited_total": res.Limit.Waited,
		"openload_attempts_total":              0,
		"openload_resends_total":               0,
		"openload_bytes_written_total":         0,
		"openload_bytes_read_total":            0,
	}
	if w := res.Wire; w != nil {
		m["openload_attempts_total"] = w.Attempts
		m["openload_resends_total"] = w.Resends
		if b := w.Bytes; b != nil {
			m["openload_bytes_written_total"] = b.Written
			m["openload_bytes_read_total"] = b.Read
		}
	}
	return m
}

// HistogramCounts maps each latency histogram's _count series to the
// number of samples the result's histogram of the same figure holds.
func HistogramCounts(res *result.Result) (map[string]int64, error) {
	m := map[string]int64{}
	for name, enc := range map[string]string{
		"openload_response_time_seconds_count": res.Histograms.Response,
		"openload_service_time_seconds_count":  res.Histograms.Service,
		"openload_send_delay_seconds_count":    res.Histograms.SendDelay,
	} {
		h, err := result.DecodeHistogram(enc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		m[name] = h.TotalCount()
	}
	return m, nil
}
