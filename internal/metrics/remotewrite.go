package metrics

import (
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"
)

// The body of a Prometheus remote write 1.0 request: a WriteRequest in
// protobuf, encoded here by hand (protowire, already in the module graph
// through client_golang) rather than importing
// github.com/prometheus/prometheus/prompb, whose module is the whole
// Prometheus server. The schema, from prometheus/prompb (remote.proto,
// types.proto), field numbers as there:
//
//	message WriteRequest   { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3; }
//	message TimeSeries     { repeated Label labels = 1; repeated Sample samples = 2; }
//	message Label          { string name = 1; string value = 2; }
//	message Sample         { double value = 1; int64 timestamp = 2; } // timestamp: ms since the epoch
//	message MetricMetadata { MetricType type = 1; string metric_family_name = 2; string help = 4; }
//	enum MetricType { UNKNOWN = 0; COUNTER = 1; GAUGE = 2; HISTOGRAM = 3; GAUGEHISTOGRAM = 4; SUMMARY = 5; }
//
// Remote write 1.0 carries no histogram type of its own (native histograms
// came later), so a histogram is sent as the classic series a scrape
// stores: NAME_bucket{le}, NAME_sum, NAME_count, and a summary as
// NAME{quantile}, NAME_sum, NAME_count. The le and quantile values are
// written as the text format writes them (expfmt: strconv's 'g'), so a
// pushed series and a scraped one have the same labels.
const (
	fieldWriteTimeseries = 1
	fieldWriteMetadata   = 3
	fieldSeriesLabels    = 1
	fieldSeriesSamples   = 2
	fieldLabelName       = 1
	fieldLabelValue      = 2
	fieldSampleValue     = 1
	fieldSampleTimestamp = 2
	fieldMetaType        = 1
	fieldMetaFamilyName  = 2
	fieldMetaHelp        = 4
)

// metricType maps client_model's types to remote write's MetricType.
var metricType = map[dto.MetricType]uint64{
	dto.MetricType_COUNTER:         1,
	dto.MetricType_GAUGE:           2,
	dto.MetricType_HISTOGRAM:       3,
	dto.MetricType_GAUGE_HISTOGRAM: 4,
	dto.MetricType_SUMMARY:         5,
	dto.MetricType_UNTYPED:         0,
}

type label struct{ name, value string }

// writeRequest encodes mfs as a WriteRequest: every sample at ms (or at
// a metric's own timestamp, when it has one), with extra added to every
// series' labels where the metric has no label of that name.
func writeRequest(mfs []*dto.MetricFamily, extra map[string]string, ms int64) []byte {
	var b, series []byte
	for _, mf := range mfs {
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			base := make([]label, 0, len(m.GetLabel())+len(extra)+2)
			for _, lp := range m.GetLabel() {
				base = append(base, label{lp.GetName(), lp.GetValue()})
			}
			for k, v := range extra {
				if !slices.ContainsFunc(base, func(l label) bool { return l.name == k }) {
					base = append(base, label{k, v})
				}
			}
			at := ms
			if m.TimestampMs != nil {
				at = m.GetTimestampMs()
			}
			add := func(suffix string, v float64, more ...label) {
				series = appendSeries(series[:0], name+suffix, base, more, v, at)
				b = protowire.AppendTag(b, fieldWriteTimeseries, protowire.BytesType)
				b = protowire.AppendBytes(b, series)
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add("", m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add("", m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add("", m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := m.GetHistogram()
				inf := false
				for _, bk := range h.GetBucket() {
					inf = inf || math.IsInf(bk.GetUpperBound(), +1)
					add("_bucket", float64(bk.GetCumulativeCount()), label{"le", formatFloat(bk.GetUpperBound())})
				}
				if !inf { // the text format adds it too: every observation is ≤ +Inf
					add("_bucket", float64(h.GetSampleCount()), label{"le", "+Inf"})
				}
				add("_sum", h.GetSampleSum())
				add("_count", float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add("", q.GetValue(), label{"quantile", formatFloat(q.GetQuantile())})
				}
				add("_sum", s.GetSampleSum())
				add("_count", float64(s.GetSampleCount()))
			}
		}
	}
	var meta []byte
	for _, mf := range mfs {
		meta = meta[:0]
		meta = protowire.AppendTag(meta, fieldMetaType, protowire.VarintType)
		meta = protowire.AppendVarint(meta, metricType[mf.GetType()])
		meta = protowire.AppendTag(meta, fieldMetaFamilyName, protowire.BytesType)
		meta = protowire.AppendString(meta, mf.GetName())
		meta = protowire.AppendTag(meta, fieldMetaHelp, protowire.BytesType)
		meta = protowire.AppendString(meta, mf.GetHelp())
		b = protowire.AppendTag(b, fieldWriteMetadata, protowire.BytesType)
		b = protowire.AppendBytes(b, meta)
	}
	return b
}

// appendSeries appends a TimeSeries of one sample. Its labels are
// __name__, base and more, sorted by name as remote write requires.
func appendSeries(b []byte, name string, base, more []label, v float64, ms int64) []byte {
	ls := make([]label, 0, len(base)+len(more)+1)
	ls = append(append(append(ls, label{"__name__", name}), base...), more...)
	slices.SortFunc(ls, func(x, y label) int { return strings.Compare(x.name, y.name) })
	var l []byte
	for _, lb := range ls {
		l = l[:0]
		l = protowire.AppendTag(l, fieldLabelName, protowire.BytesType)
		l = protowire.AppendString(l, lb.name)
		l = protowire.AppendTag(l, fieldLabelValue, protowire.BytesType)
		l = protowire.AppendString(l, lb.value)
		b = protowire.AppendTag(b, fieldSeriesLabels, protowire.BytesType)
		b = protowire.AppendBytes(b, l)
	}
	var s []byte
	s = protowire.AppendTag(s, fieldSampleValue, protowire.Fixed64Type)
	s = protowire.AppendFixed64(s, math.Float64bits(v))
	s = protowire.AppendTag(s, fieldSampleTimestamp, protowire.VarintType)
	s = protowire.AppendVarint(s, uint64(ms))
	b = protowire.AppendTag(b, fieldSeriesSamples, protowire.BytesType)
	return protowire.AppendBytes(b, s)
}

// formatFloat writes a bound as the text format does (expfmt.writeFloat
// agrees with strconv's shortest 'g' for every value, +Inf included).
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
