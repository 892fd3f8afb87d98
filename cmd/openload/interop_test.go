package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// The outside readers of TestHdrHistogramInterop: HdrHistogram's own
// JavaScript and Java libraries, driven by the scripts in testdata/interop.
// .ci/run installs both and sets interopRequired, so that a missing one
// fails there instead of skipping.
const (
	interopRequired = "OPENLOAD_INTEROP"
	interopDir      = "testdata/interop"
	hdrJar          = "/usr/share/java/hdrhistogram.jar" // Debian's libhdrhistogram-java
)

// javaArgs start every java command line: one core and the quick JIT only,
// which make each short run faster and cheaper (see docs/MEASUREMENTS.md,
// “javaArgs”) and leave a core to the timing-sensitive tests of other
// packages that run beside this one.
var javaArgs = []string{"-XX:ActiveProcessorCount=1", "-XX:TieredStopAtLevel=1", "-cp", hdrJar}

// outsideReader is one HdrHistogram implementation not written here.
type outsideReader struct {
	name    string
	missing func() string // why it cannot run here, "" when it can
	// cmd reads the JSON results (for Java, as files of "NAME HISTOGRAM"
	// lines made by javaLines) and interval logs given as pairs of
	// arguments; see testdata/interop/hdr.js.
	cmd func(ctx context.Context, args []string) *exec.Cmd
	// arg is what to pass for a result file.
	arg func(t *testing.T, result string) string
	// tool, if set, checks the interval log with the library's own
	// command-line tool: want has openload's figures for each tag.
	tool func(t *testing.T, ctx context.Context, hlog string, want expected)
}

var outsideReaders = []outsideReader{
	{
		name: "hdr-histogram-js",
		missing: func() string {
			if _, err := exec.LookPath("node"); err != nil {
				return "node is not installed"
			}
			if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "hdr-histogram-js")); err != nil {
				return "hdr-histogram-js is not installed (npm ci --prefix cmd/openload/" + interopDir + ")"
			}
			return ""
		},
		cmd: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, "node", append([]string{filepath.Join(interopDir, "hdr.js")}, args...)...)
		},
		arg: func(_ *testing.T, result string) string { return result },
	},
	{
		name: "java HdrHistogram",
		missing: func() string {
			if _, err := exec.LookPath("java"); err != nil {
				return "java is not installed"
			}
			if _, err := os.Stat(hdrJar); err != nil {
				return hdrJar + " is missing (apt-get install libhdrhistogram-java)"
			}
			return ""
		},
		cmd: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, "java", slices.Concat(javaArgs, []string{filepath.Join(interopDir, "Hdr.java")}, args)...)
		},
		arg:  javaLines,
		tool: logProcessor,
	},
}

// logProcessorTotal is the line HistogramLogProcessor ends its percentile
// distribution with.
var logProcessorTotal = regexp.MustCompile(`(?m)^#\[Max\s*=\s*([0-9.]+), Total count\s*=\s*([0-9]+)\]$`)

// logProcessor runs HdrHistogram's HistogramLogProcessor, the tool the
// README names for --hlog, on each tag of the log, in ms
// (-outputValueUnitRatio 1000: the log's values are µs), and checks the
// max and count it prints.
func logProcessor(t *testing.T, ctx context.Context, hlog string, want expected) {
	for _, tag := range result.IntervalTags {
		cmd := exec.CommandContext(ctx, "java", slices.Concat(javaArgs, []string{"org.HdrHistogram.HistogramLogProcessor",
			"-i", hlog, "-tag", tag, "-outputValueUnitRatio", "1000"})...)
		out, err := cmd.CombinedOutput()
		m := logProcessorTotal.FindStringSubmatch(string(out))
		if err != nil || m == nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		w := want.figures["tag "+tag]
		if wantMax := fmt.Sprintf("%.3f", float64(w[1])/1000); m[1] != wantMax || m[2] != strconv.FormatInt(w[0], 10) {
			t.Errorf("HistogramLogProcessor -tag %s: max %s ms, count %s; openload %s ms, %d", tag, m[1], m[2], wantMax, w[0])
		}
		t.Logf("HistogramLogProcessor -tag %-10s %s", tag, m[0])
	}
}

// javaLines writes a result's histogram strings, exactly as the file holds
// them, as "NAME HISTOGRAM" lines for Hdr.java (the JDK reads no JSON).
func javaLines(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Histograms   map[string]string `json:"histograms"`
		ServerTiming []struct {
			Name      string `json:"name"`
			Histogram string `json:"histogram"`
		} `json:"server_timing"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for _, m := range result.MetricNames(func(m result.Metric) bool { return m.Histogram && m.Samples != result.OfStreams }) {
		if s := raw.Histograms[m]; s != "" {
			fmt.Fprintf(&lines, "%s %s\n", m, s)
		}
	}
	for _, st := range raw.ServerTiming {
		fmt.Fprintf(&lines, "server_timing:%s %s\n", st.Name, st.Histogram)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path)+".lines")
	if err := os.WriteFile(out, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// figures are one histogram's count and values in µs: max, then the value
// at each of openload's percentiles (50, 90, 95, 99, 99.9, 99.99).
type figures [8]int64

func (f figures) String() string {
	return fmt.Sprintf("n=%d p50=%d p99=%d max=%d µs", f[0], f[2], f[5], f[1])
}

// fromPercentiles turns openload's figures (ms, rounded to the µs) into µs.
func fromPercentiles(p result.Percentiles) figures {
	us := func(ms float64) int64 { return int64(math.Round(ms * 1000)) }
	return figures{p.Count, us(p.Max), us(p.P50), us(p.P90), us(p.P95), us(p.P99), us(p.P999), us(p.P9999)}
}

// expected holds openload's figures for each histogram of a file, by
// "histogram NAME" or "tag TAG", and a log's per-interval counts by
// "intervals TAG".
type expected struct {
	figures   map[string]figures
	intervals map[string][]int64
}

// resultFigures are the figures a result stores and prints; each is
// checked against openload's own decode of the stored histogram first.
func resultFigures(t *testing.T, path string) expected {
	res, err := readResultFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type stored struct {
		p result.Percentiles
		h func() (*hdrhistogram.Histogram, error)
	}
	all := map[string]stored{}
	for m, p := range map[string]result.Percentiles{"response": res.Response, "service": res.Service, "send_delay": res.SendDelay} {
		all[m] = stored{p, func() (*hdrhistogram.Histogram, error) { return res.Histogram(m) }}
	}
	if res.Corrected != nil {
		all["corrected"] = stored{res.Corrected.Percentiles, func() (*hdrhistogram.Histogram, error) { return res.Histogram("corrected") }}
	}
	for _, st := range res.ServerTiming {
		all["server_timing:"+st.Name] = stored{st.Percentiles, func() (*hdrhistogram.Histogram, error) { return result.DecodeHistogram(st.Histogram) }}
	}
	e := expected{figures: map[string]figures{}}
	for name, s := range all {
		h, err := s.h()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, name, err)
		}
		if dec := fromPercentiles(result.Summarize(h)); dec != fromPercentiles(s.p) {
			t.Fatalf("%s: %s: stored %v, openload decodes %v", path, name, fromPercentiles(s.p), dec)
		}
		e.figures["histogram "+name] = fromPercentiles(s.p)
	}
	return e
}

// hlogFigures are what `openload report --hlog` reads from a log: each
// tag's merged intervals, and each interval's count.
func hlogFigures(t *testing.T, path string) expected {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	il, err := result.ReadIntervalLog(f, path)
	if err != nil {
		t.Fatal(err)
	}
	e := expected{figures: map[string]figures{}, intervals: map[string][]int64{}}
	for tag, h := range il.Total {
		e.figures["tag "+tag] = fromPercentiles(result.Summarize(h))
		for _, iv := range il.Intervals[tag] {
			e.intervals["intervals "+tag] = append(e.intervals["intervals "+tag], iv.TotalCount())
		}
	}
	return e
}

// parseOutside reads hdr.js's (and Hdr.java's) output into an expected per
// file argument.
func parseOutside(t *testing.T, out string) map[string]expected {
	got := map[string]expected{}
	var cur expected
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			t.Fatalf("output line %q", sc.Text())
		}
		if f[0] == "file" {
			cur = expected{figures: map[string]figures{}, intervals: map[string][]int64{}}
			got[f[1]] = cur
			continue
		}
		var nums []int64
		for _, s := range f[2:] {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("output line %q: %v", sc.Text(), err)
			}
			nums = append(nums, v)
		}
		key := f[0] + " " + f[1]
		switch {
		case cur.figures == nil:
			t.Fatalf("output line %q before a file line", sc.Text())
		case f[0] == "intervals":
			cur.intervals[key] = nums
		case len(nums) == len(figures{}):
			cur.figures[key] = figures(nums)
		default:
			t.Fatalf("output line %q: want %d numbers", sc.Text(), len(figures{}))
		}
	}
	return got
}

// TestHdrHistogramInterop: histograms of a JSON result written by a real
// run (the three, and Server-Timing metrics'), of a committed closed-run
// result (with the corrected histogram), and the run's interval log are
// read by HdrHistogram's JavaScript and Java libraries; they find every
// histogram and tag, with the same counts, max and percentiles as openload
// stores and prints (see hdr.js for why the percentiles are asked by rank),
// and the log's intervals with the same counts.
func TestHdrHistogramInterop(t *testing.T) {
	required := os.Getenv(interopRequired) != ""
	var readers []outsideReader
	for _, r := range outsideReaders {
		if why := r.missing(); why != "" {
			if required {
				t.Errorf("%s: %s, and %s is set", r.name, why, interopRequired)
			} else {
				t.Logf("not checked with %s: %s", r.name, why)
			}
			continue
		}
		readers = append(readers, r)
	}
	if len(readers) == 0 {
		t.Skipf("no HdrHistogram library outside openload here: .ci/run installs them (set %s=1 to fail instead)", interopRequired)
	}

	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("Server-Timing", fmt.Sprintf("queue;dur=%.3f, model;dur=%.3f", float64(i%17)*0.731, 1+float64(i%29)*0.413))
	}))
	defer srv.Close()
	dir := t.TempDir()
	run, hlog := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.hlog")
	if code, out, errs := runCLI("-rate", "100", "-d", "2s", "-q", "--server-timing", "--send-delay-budget", "1s", "-o", run, "--hlog", hlog, srv.URL); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	closed := filepath.Join("..", "..", "docs", "stall-closed.json")
	want := map[string]expected{run: resultFigures(t, run), closed: resultFigures(t, closed), hlog: hlogFigures(t, hlog)}
	if len(want[run].figures) != 5 || len(want[closed].figures) != 4 {
		t.Fatalf("want 5 histograms in the run (3 + 2 Server-Timing metrics) and 4 in %s, got %v and %v", closed, want[run].figures, want[closed].figures)
	}
	// The log's merged intervals are the run's histograms.
	for _, tag := range result.IntervalTags {
		if g, w := want[hlog].figures["tag "+tag], want[run].figures["histogram "+tag]; g != w {
			t.Errorf("%s: merged intervals %v, result %v", tag, g, w)
		}
	}

	var table strings.Builder
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			args := map[string]string{} // argument passed → file
			var argv []string
			for _, f := range []string{run, closed} {
				a := r.arg(t, f)
				args[a] = f
				argv = append(argv, "result", a)
			}
			args[hlog] = hlog
			argv = append(argv, "hlog", hlog)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := r.cmd(ctx, argv)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
			}
			if r.tool != nil {
				r.tool(t, ctx, hlog, want[hlog])
			}
			got := parseOutside(t, string(out))
			for arg, file := range args {
				g, w := got[arg], want[file]
				if len(g.figures) != len(w.figures) || len(g.intervals) != len(w.intervals) {
					t.Errorf("%s: read %v %v, openload %v %v", file, g.figures, g.intervals, w.figures, w.intervals)
				}
				var names []string
				for name := range w.figures {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					if g.figures[name] != w.figures[name] {
						t.Errorf("%s: %s: %s reads %v, openload %v", file, name, r.name, g.figures[name], w.figures[name])
					}
					fmt.Fprintf(&table, "%-18s %-22s %-32s openload %v · %s %v\n", r.name, filepath.Base(file), name, w.figures[name], r.name, g.figures[name])
				}
				for name, counts := range w.intervals {
					if fmt.Sprint(g.intervals[name]) != fmt.Sprint(counts) {
						t.Errorf("%s: %s: %s reads counts %v, openload %v", file, name, r.name, g.intervals[name], counts)
					}
					fmt.Fprintf(&table, "%-18s %-22s %-32s openload %v · %s %v\n", r.name, filepath.Base(file), name, counts, r.name, g.intervals[name])
				}
			}
		})
	}
	t.Logf("figures in µs\n%s", table.String())
}
