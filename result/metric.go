package result

import "strings"

// Metric is one figure of a run that a name reaches: an objective
// (verify's "response.p99<=200ms"), --metric of report and diff (a
// histogram the result holds), a report's titles. MetricTable is the one
// list of them; verify, report and the command line read a row, so a new
// latency figure is a row here (and its histogram in Histograms.named),
// not edits in each.
type Metric struct {
	// Name is the figure's name in the result file and in an objective:
	// "response", "ttft_response", "errors"; for a family of figures,
	// the pattern "server.NAME".
	Name string
	// Title names the figure for people: "response time"; "" names it by
	// Name.
	Title string
	// Share: the figure is a share of requests in [0, 1]; else it is a
	// time in ms, read by a statistic (p99, max, mean …).
	Share bool
	// Objective is how an objective writes the figure: Name, a shorter
	// alias ("ttft" for ttft_response) or a pattern ("class.VALUE.share");
	// "" when no objective may judge it.
	Objective string
	// Prefix is what the names of a family of figures begin with
	// ("server."); "" for one figure.
	Prefix string
	// Count: a share family whose figure may be written as a count of
	// requests too (status.5xx<=0, status.503.count<=10).
	Count bool
	// Histogram: the result holds the figure's HdrHistogram, which
	// Result.Histogram decodes (report --format hgrm, diff A B).
	Histogram bool
	// Part: a part of a run (a target of a mix, a step of a session
	// run: Part) has the figure, so an objective scoped to a part may
	// judge it. A scenario's own result is a run's, so it has them too.
	Part bool
	// Scenario: a run's figure that no part has, which an objective
	// scoped to a scenario (whose own result is a run's) may judge: the
	// session figures, and the gRPC calls' grpc-status.
	Scenario bool
	// Samples are the requests a time holds samples of, which say what
	// it means to have none (verify's no data); 0 for a share.
	Samples Samples
	// Of reads the figure's percentiles from a result: nil when the
	// result has none (a run that streamed nothing, one without
	// sessions); a nil Of for a share or a family, which their readers
	// compute.
	Of func(*Result) *Percentiles
	// OfPart reads it from a part; nil when parts do not hold it. It
	// returns nil when the part has none (a part that streamed nothing).
	OfPart func(*Part) *Percentiles
}

// Samples are the requests a time figure holds samples of.
type Samples int

const (
	// OfAnswers: the answered requests' times (response and service
	// time). With no answer there are none, though the histogram then
	// holds the failures' times.
	OfAnswers Samples = iota + 1
	// OfSends: the sent requests' times (send delay).
	OfSends
	// OfStreams: the streamed answers' times (TTFT, ITL, TPOT).
	OfStreams
	// OfSessions: the ended sessions' times (session time): a session
	// still walking when the run ended has none.
	OfSessions
)

// stream reads a figure of a run's streams, nil without streams.
func stream(f func(*StreamResult) *Percentiles) func(*Result) *Percentiles {
	return func(r *Result) *Percentiles {
		if r.Stream == nil {
			return nil
		}
		return f(r.Stream)
	}
}

// partStream reads a figure of a part's streams (a conversation's
// turn), nil without streams.
func partStream(f func(*PartStream) *Percentiles) func(*Part) *Percentiles {
	return func(p *Part) *Percentiles {
		if p.Stream == nil {
			return nil
		}
		return f(p.Stream)
	}
}

// MetricTable is the table of figures, in the order help and errors list
// them.
func MetricTable() []Metric {
	return []Metric{
		{Name: "response", Title: "response time", Objective: "response", Histogram: true, Part: true, Samples: OfAnswers,
			Of: func(r *Result) *Percentiles { return &r.Response }, OfPart: func(p *Part) *Percentiles { return &p.Response }},
		{Name: "service", Title: "service time", Objective: "service", Histogram: true, Part: true, Samples: OfAnswers,
			Of: func(r *Result) *Percentiles { return &r.Service }, OfPart: func(p *Part) *Percentiles { return &p.Service }},
		{Name: "send_delay", Title: "send delay", Objective: "send_delay", Histogram: true, Part: true, Samples: OfSends,
			Of: func(r *Result) *Percentiles { return &r.SendDelay }, OfPart: func(p *Part) *Percentiles { return &p.SendDelay }},
		{Name: "corrected", Title: "corrected response time", Histogram: true},
		// TTFT from the schedule, as response time is: the objective's
		// plain "ttft". A part has it when its requests streamed (a
		// conversation's turn: Part.Stream).
		{Name: "ttft_response", Title: "TTFT from the schedule", Objective: "ttft", Histogram: true, Part: true, Samples: OfStreams,
			Of:     stream(func(s *StreamResult) *Percentiles { return &s.TTFTResponse }),
			OfPart: partStream(func(s *PartStream) *Percentiles { return &s.TTFTResponse })},
		{Name: "ttft_service", Title: "TTFT from the send", Objective: "ttft_service", Histogram: true, Part: true, Samples: OfStreams,
			Of:     stream(func(s *StreamResult) *Percentiles { return &s.TTFTService }),
			OfPart: partStream(func(s *PartStream) *Percentiles { return &s.TTFTService })},
		{Name: "itl", Title: "inter-token latency", Objective: "itl", Histogram: true, Samples: OfStreams,
			Of: stream(func(s *StreamResult) *Percentiles { return &s.ITL })},
		{Name: "tpot", Title: "time per output token", Objective: "tpot", Histogram: true, Part: true, Samples: OfStreams,
			Of:     stream(func(s *StreamResult) *Percentiles { return &s.TPOT }),
			OfPart: partStream(func(s *PartStream) *Percentiles { return &s.TPOT })},
		{Name: "ttfa_response", Histogram: true, Samples: OfStreams,
			Of: stream(func(s *StreamResult) *Percentiles { return &s.TTFAResponse })},
		{Name: "ttfa_service", Histogram: true, Samples: OfStreams,
			Of: stream(func(s *StreamResult) *Percentiles { return &s.TTFAService })},
		// A Server-Timing metric the answers carried (ServerTiming).
		{Name: "server.NAME", Objective: "server.NAME", Prefix: "server."},
		// The requests that did not complete: errors, timeouts and
		// unfinished.
		{Name: "errors", Objective: "errors", Share: true, Part: true},
		// The requests answered with a 4xx other than 408 and 429.
		{Name: "client_errors", Objective: "client_errors", Share: true, Part: true},
		// The requests answered with a status CODE (503) or of a class
		// (5xx): a share of the scheduled requests, or a count.
		{Name: "status.CODE", Objective: "status.CODE", Prefix: "status.", Share: true, Count: true, Part: true},
		// The gRPC calls answered with grpc-status CODE, by its name in
		// lower case (GRPCKey: unavailable, ok): a share of the
		// scheduled requests, or a count. A scenario of calls has its
		// own; a target or a step never is a call.
		{Name: "grpc.CODE", Objective: "grpc.CODE", Prefix: "grpc.", Share: true, Count: true, Scenario: true},
		// The requests whose class header had VALUE (Classes).
		{Name: "class.VALUE", Objective: "class.VALUE.share", Prefix: "class.", Share: true},
		// A session's own time, from its arrival to its last step's
		// done, of the sessions that ended (Sessions.Time).
		{Name: "session", Title: "session time", Objective: "session", Scenario: true, Samples: OfSessions,
			Of: func(r *Result) *Percentiles {
				if r.Sessions == nil {
					return nil
				}
				return &r.Sessions.Time
			}},
		// The sessions that ended early (at a failed step), of those
		// that ended: completed or ended early.
		{Name: "sessions_ended_early", Objective: "sessions_ended_early", Share: true, Scenario: true},
	}
}

// LookupMetric is the row of the figure named name: the row whose Name it
// is, or the family whose Prefix it begins with ("server.queue").
func LookupMetric(name string) (Metric, bool) {
	for _, m := range MetricTable() {
		if m.Name == name || m.Prefix != "" && strings.HasPrefix(name, m.Prefix) {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames are the Names of the figures keep(m) holds, in the table's
// order.
func MetricNames(keep func(Metric) bool) []string {
	var out []string
	for _, m := range MetricTable() {
		if keep(m) {
			out = append(out, m.Name)
		}
	}
	return out
}

// HistogramNames are the figures whose histogram a result holds, as
// Histogram takes them.
func HistogramNames() []string { return MetricNames(func(m Metric) bool { return m.Histogram }) }

// MetricTitle names the figure metric for people: "response time" for
// response.
func MetricTitle(metric string) string {
	if m, ok := LookupMetric(metric); ok && m.Title != "" {
		return m.Title
	}
	return metric
}
