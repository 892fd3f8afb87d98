package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// Hand is what one mode must report by the hand calculation of README.md,
// in ms (Count in requests).
type Hand struct {
	Count          int64
	P95, P99, Mean float64
}

// The hand calculation. With
//
//	R the rate, I = 1/R the interval, D the duration, N = R·D the requests
//	the schedule holds, S the stall, K = S·R the slots inside the stall,
//	c the time one request takes when nothing stalls (model + loopback HTTP)
//
// and HdrHistogram's percentile q being the value of rank ⌊q·n + ½⌋ of n
// values sorted ascending:
//
// Closed loop (one user paced to R). The request sent when the stall begins
// is held for S; its user misses the K slots that fall in the stall and
// never sends them. It records n = N − K values: N − K − 1 of c and one of S.
//
//	count = N − K,  p95 = p99 = c,  mean = ((N − K − 1)·c + S) / (N − K)
//
// Open model (one connection). The request caught by the stall waits S;
// the requests due during the stall wait inside openload, then leave one
// after another, each taking c. The k-th after the stall's first waits
// S + k·c − k·I = S − k·(I − c), until the backlog is gone after
// M = ⌊(S − c)/(I − c)⌋ + 1 requests. The j longest responses are k = 0 …
// j − 1, so the value of rank r is S − (N − r)·(I − c).
//
//	count = N,  p_q = S − (N − ⌊q·N + ½⌋)·(I − c),
//	mean = (M·S − (I − c)·M(M − 1)/2 + (N − M)·c) / N
//
// Corrected closed loop (RecordCorrectedValue with interval I). The one
// value S ≥ K·I also adds S − I, S − 2I, …, down to I: K values in all,
// i·I for i = 1 … K. It holds n = N − K − 1 + K = N − 1 values.
//
//	count = N − 1,  p_q = i·I with i = ⌊q·(N − 1) + ½⌋ − (N − K − 1),
//	mean = ((N − K − 1)·c + I·K(K + 1)/2) / (N − 1)

// HandClosed is the closed loop's hand calculation for per-request time c.
func HandClosed(sc Scenario, c time.Duration) Hand {
	n, k := sc.counts()
	cm, s := msOf(c), msOf(sc.StallFor)
	return Hand{Count: n - k, P95: cm, P99: cm, Mean: (float64(n-k-1)*cm + s) / float64(n-k)}
}

// HandOpen is the open model's hand calculation for per-request time c.
func HandOpen(sc Scenario, c time.Duration) Hand {
	n, _ := sc.counts()
	cm, s, iv := msOf(c), msOf(sc.StallFor), 1000/sc.Rate
	gain := iv - cm // how much of the backlog each request clears
	at := func(q float64) float64 {
		j := n - rank(q, n)
		return max(s-float64(j)*gain, cm)
	}
	m := math.Floor((s-cm)/gain) + 1
	mean := (m*s - gain*m*(m-1)/2 + (float64(n)-m)*cm) / float64(n)
	return Hand{Count: n, P95: at(95), P99: at(99), Mean: mean}
}

// HandCorrected is the corrected closed loop's hand calculation.
func HandCorrected(sc Scenario, c time.Duration) Hand {
	n, k := sc.counts()
	cm, iv := msOf(c), 1000/sc.Rate
	total := n - 1
	at := func(q float64) float64 {
		i := rank(q, total) - (n - k - 1)
		if i < 1 {
			return cm
		}
		return float64(i) * iv
	}
	mean := (float64(n-k-1)*cm + iv*float64(k*(k+1))/2) / float64(total)
	return Hand{Count: total, P95: at(95), P99: at(99), Mean: mean}
}

// counts returns N = R·D and K = S·R.
func (sc Scenario) counts() (n, k int64) {
	return schedule.ConstantCount(sc.Rate, sc.Duration), schedule.ConstantCount(sc.Rate, sc.StallFor)
}

// rank is HdrHistogram's rank of percentile q among n values.
func rank(q float64, n int64) int64 {
	return min(max(int64(q/100*float64(n)+0.5), 1), n)
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// HandTable prints the hand calculation next to the measured values, with
// c taken from the open run's service-time p50 (one request when nothing
// stalls).
func HandTable(w io.Writer, sc Scenario, closed, open *result.Result) error {
	c := time.Duration(open.Service.P50 * float64(time.Millisecond))
	fmt.Fprintf(w, "c = %.3f ms (the open run's service-time p50: one request to the %v model over loopback HTTP)\n", msOf(c), sc.Latency)
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header("", "", "count", "p95 ms", "p99 ms", "mean ms")
	type row struct {
		mode, what string
		h          Hand
	}
	measured := func(p result.Percentiles) Hand {
		return Hand{Count: p.Count, P95: p.P95, P99: p.P99, Mean: p.Mean}
	}
	rows := []row{
		{"closed loop (response)", "by hand", HandClosed(sc, c)},
		{"", "measured", measured(closed.Response)},
		{"open model (response)", "by hand", HandOpen(sc, c)},
		{"", "measured", measured(open.Response)},
	}
	if closed.Corrected != nil {
		rows = append(rows,
			row{"closed loop, corrected", "by hand", HandCorrected(sc, c)},
			row{"", "measured", measured(closed.Corrected.Percentiles)})
	}
	for _, r := range rows {
		h := r.h
		if err := t.Append([]string{r.mode, r.what, fmt.Sprint(h.Count), fmt.Sprintf("%.3f", h.P95), fmt.Sprintf("%.3f", h.P99), fmt.Sprintf("%.3f", h.Mean)}); err != nil {
			return err
		}
	}
	return t.Render()
}
