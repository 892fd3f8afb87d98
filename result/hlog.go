package result

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/field"
)

// IntervalLogInput is one interval log to merge (as --hlog writes it) and
// the name errors call it by.
type IntervalLogInput struct {
	Name string
	Log  []byte
}

var (
	startTimeLine = regexp.MustCompile(`(?m)^#\[StartTime: ([0-9.]+)`)
	baseTimeLine  = regexp.MustCompile(`(?m)^#\[BaseTime: ([0-9.]+)`)
)

// MergeIntervalLogs adds the interval logs of the shards of one run into
// one, written to w: the histograms of one tag and one interval (the same
// absolute start) are added, the intervals written in time order, tags in
// IntervalTags order.
//
// It refuses, naming the input, what Merge refuses where a log can tell:
// a log given twice (the same name again, or the same intervals under
// another name), and logs of different starts. The logs must share one
// start (their #[StartTime], the shared StartAt of the run), so that their
// seconds are the same seconds, and one #[BaseTime]. A log's header holds
// nothing else of its run (no shard, target or seed), so shards of
// another run with the same start, or a merged log given with one of its
// shards, cannot be told apart from a proper set.
func MergeIntervalLogs(w io.Writer, in ...IntervalLogInput) error {
	if len(in) == 0 {
		return fmt.Errorf("merge: no interval logs")
	}
	names := map[string]bool{}
	contents := map[[sha256.Size]byte]string{}
	type key struct {
		start int64
		tag   string
	}
	sums := map[key]*hdrhistogram.Histogram{}
	ends := map[key]int64{}
	var start, base string
	var startMs int64
	for i, x := range in {
		if names[x.Name] {
			return errGivenTwice(x.Name, "")
		}
		names[x.Name] = true
		m := startTimeLine.FindSubmatch(x.Log)
		if m == nil {
			return fmt.Errorf("%s: no #[StartTime] line: not an interval log openload wrote", x.Name)
		}
		b := "none"
		if bm := baseTimeLine.FindSubmatch(x.Log); bm != nil {
			b = string(bm[1])
		}
		if i == 0 {
			start, base = string(m[1]), b
			sec, err := strconv.ParseFloat(start, 64)
			if err != nil {
				return fmt.Errorf("%s: start time %q: %v", x.Name, start, err)
			}
			startMs = int64(sec * 1000)
		} else if string(m[1]) != start {
			return field.Errorf("StartAt", string(m[1]), "%s: starts at %s, but %s at %s: not shards of one {StartAt}", x.Name, m[1], in[0].Name, start)
		} else if b != base {
			return errNotSameRun(x.Name, "base time", b, in[0].Name, base)
		}
		lr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(x.Log))
		empty := true
		for n := 1; ; n++ {
			h, err := lr.NextIntervalHistogram()
			if err != nil {
				return fmt.Errorf("%s: interval %d: %v", x.Name, n, err)
			}
			if h == nil {
				break
			}
			empty = false
			k := key{h.StartTimeMs(), h.Tag()}
			if sums[k] == nil {
				sums[k] = NewHistogram()
			}
			if dropped := sums[k].Merge(h); dropped > 0 {
				return fmt.Errorf("%s: interval %d (%s): %d values outside openload's histogram range", x.Name, n, h.Tag(), dropped)
			}
			ends[k] = max(ends[k], h.EndTimeMs())
		}
		// The same intervals under another name are the same log again;
		// logs of no interval say nothing of their shard and add nothing.
		if !empty {
			sum := sha256.Sum256(x.Log)
			if other, dup := contents[sum]; dup {
				return errAgain(x.Name, "the same log", other)
			}
			contents[sum] = x.Name
		}
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	rank := func(tag string) int {
		if i := slices.Index(IntervalTags, tag); i >= 0 {
			return i
		}
		return len(IntervalTags)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(rank(a.tag), rank(b.tag)), cmp.Compare(a.tag, b.tag))
	})
	lw := hdrhistogram.NewHistogramLogWriter(w)
	lw.SetBaseTime(startMs)
	for _, f := range []func() error{
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment(fmt.Sprintf("openload interval log: %d shards' logs merged, one interval per second of completion, values in microseconds", len(in)))
		},
		func() error { return lw.OutputStartTime(startMs) },
		func() error { return lw.OutputBaseTime(startMs) },
		lw.OutputLegend,
	} {
		if err := f(); err != nil {
			return err
		}
	}
	for _, k := range keys {
		h := sums[k]
		h.SetTag(k.tag)
		h.SetStartTimeMs(k.start)
		h.SetEndTimeMs(ends[k])
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return err
		}
	}
	return nil
}

// IntervalTags are the tags of the interval log, in the order written.
var IntervalTags = []string{"response", "service", "send_delay"}

// IntervalLog is an interval log read back: per tag, the intervals in order
// and their merge.
type IntervalLog struct {
	Intervals map[string][]*hdrhistogram.Histogram
	Total     map[string]*hdrhistogram.Histogram
}

// ReadIntervalLog reads an HdrHistogram interval log such as --hlog writes;
// name is used in errors. Intervals without a tag are filed under "".
func ReadIntervalLog(rd io.Reader, name string) (*IntervalLog, error) {
	lr := hdrhistogram.NewHistogramLogReader(rd)
	out := &IntervalLog{Intervals: map[string][]*hdrhistogram.Histogram{}, Total: map[string]*hdrhistogram.Histogram{}}
	n := 0
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("%s: interval %d: %v", name, n+1, err)
		}
		if h == nil {
			break
		}
		n++
		tag := h.Tag()
		out.Intervals[tag] = append(out.Intervals[tag], h)
		if out.Total[tag] == nil {
			out.Total[tag] = NewHistogram()
		}
		if dropped := out.Total[tag].Merge(h); dropped > 0 {
			return nil, fmt.Errorf("%s: interval %d (%s): %d values outside openload's histogram range", name, n, tag, dropped)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no interval histograms", name)
	}
	return out, nil
}

// intervalLogMarks are the header lines HdrHistogram's log writers (Java's,
// Go's, JavaScript's, and so --hlog) put before the first interval; a JSON
// result never starts with one.
var intervalLogMarks = [][]byte{
	[]byte("#[Histogram log format version "),
	[]byte("#[StartTime: "),
	[]byte("#[BaseTime: "),
	[]byte(`"StartTimestamp"`),
}

// LooksLikeIntervalLog reports whether head, the start of a file, is an
// HdrHistogram interval log: one of its leading comment lines, or the
// legend after them, is one of the headers such logs start with. Other
// comments may come first (jHiccup writes one).
func LooksLikeIntervalLog(head []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		line := sc.Bytes()
		for _, m := range intervalLogMarks {
			if bytes.HasPrefix(line, m) {
				return true
			}
		}
		if !bytes.HasPrefix(line, []byte("#")) {
			return false
		}
	}
	return false
}
