package recorder

import (
	"sort"

	"github.com/openload/openload/result"
)

// Fill sets the measured parts of res from the recorder: counts (Expected is
// left as set, as is Sessions.Expected), percentiles, statuses, error
// kinds, timeline and encoded histograms.
func (r *Recorder) Fill(res *result.Result) error {
	r.flushIntervals()
	expected := res.Counts.Expected
	res.Version = result.Version
	res.Counts = r.Counts()
	res.Counts.Expected = expected
	res.Censored = r.censored
	res.Clamped = r.clamped
	res.Dropped = 0 // only a merge drops values (result.Merge)
	res.Response = result.Summarize(r.Response)
	res.Service = result.Summarize(r.Service)
	res.SendDelay = result.Summarize(r.SendDelay)
	res.Status = map[string]int64{}
	r.status.addTo(res.Status)
	res.GRPC = r.grpc.counts()
	res.ErrorKinds = r.ErrorKinds()
	res.TLSCauses = r.TLSCauses()
	res.Timeline = r.fillClassSeconds(append([]result.Second(nil), r.timeline...))
	res.Classes = nil
	for _, t := range r.classes {
		if t.auto && !t.seen() {
			continue
		}
		ct := result.ClassTable{Header: t.header, Auto: t.auto}
		for _, v := range t.order {
			st := t.values[v]
			cv := result.ClassValue{Value: v, Count: st.count, Response: result.Summarize(st.response)}
			var err error
			if cv.Histogram, err = result.EncodeHistogram(st.response); err != nil {
				return err
			}
			if n := res.Counts.Scheduled - r.warm.outcomesSum(); n > 0 {
				cv.Share = float64(st.count) / float64(n)
			}
			ct.Values = append(ct.Values, cv)
		}
		sort.SliceStable(ct.Values, func(i, j int) bool { return ct.Values[i].Count > ct.Values[j].Count })
		ct.SetPer100Rest() // classsec.go
		res.Classes = append(res.Classes, ct)
	}
	res.DwellBound = r.dwellResult()
	if res.DwellBound != nil {
		var err error
		if res.DwellBound.Histogram, err = result.EncodeHistogram(r.dwell.hist); err != nil {
			return err
		}
	}
	warm, err := r.warmupResult()
	if err != nil {
		return err
	}
	res.Warmup = warm
	if res.Targets, err = r.targets.fill(); err != nil { // part.go
		return err
	}
	if res.Steps, err = r.steps.fill(); err != nil {
		return err
	}
	if res.Sessions, err = r.fillSessions(res.Sessions); err != nil { // session.go
		return err
	}
	res.Redirects, res.BodyOverCap = r.faults.redirects, r.faults.overCap
	wire := r.Wire()
	res.Wire = &wire
	res.Stamps = r.stampsResult() // stamps.go
	res.FailedStatus = r.FailedStatus()
	if len(res.FailedStatus) == 0 {
		res.FailedStatus = nil
	}
	res.ServerTiming = nil
	for _, name := range r.timingOrder {
		enc, err := result.EncodeHistogram(r.timings[name])
		if err != nil {
			return err
		}
		res.ServerTiming = append(res.ServerTiming, result.ServerMetric{Name: name, Percentiles: result.Summarize(r.timings[name]), Histogram: enc})
	}
	res.Histograms.Unit = "us"
	if res.Histograms.Response, err = result.EncodeHistogram(r.Response); err != nil {
		return err
	}
	if res.Histograms.Service, err = result.EncodeHistogram(r.Service); err != nil {
		return err
	}
	if res.Histograms.SendDelay, err = result.EncodeHistogram(r.SendDelay); err != nil {
		return err
	}
	if err := r.fillAnswered(res); err != nil { // answered.go
		return err
	}
	if err := r.fillStream(res); err != nil { // stream.go
		return err
	}
	res.Corrected, res.Histograms.Corrected = nil, ""
	if r.Corrected != nil {
		res.Corrected = &result.Corrected{Interval: r.interval.String(), Percentiles: result.Summarize(r.Corrected)}
		if res.Histograms.Corrected, err = result.EncodeHistogram(r.Corrected); err != nil {
			return err
		}
	}
	return nil
}
