package result

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// FileVersion is the version of the sweep file format.
const FileVersion = 1

// File is a sweep's, a search's or a set of repeats' JSON file: every
// point's full result, so that `openload report` renders the whole again
// and reads any point (FILE#N, 1-based), as `diff` does. It has no
// "version" key, so a reader of single results refuses it.
type File struct {
	SweepVersion int    `json:"sweep_version"`
	Tool         string `json:"tool"`
	Kind         string `json:"kind"` // KindSweep, KindSearch or KindRepeats
	// KneeFactor is the factor over the lowest point's response p99 that
	// names a sweep's knee; 0 in files written before it was kept.
	KneeFactor float64     `json:"knee_factor,omitempty"`
	Knee       *FileKnee   `json:"knee,omitempty"`
	Search     *FileSearch `json:"search,omitempty"`
	Points     []FilePoint `json:"points"`
}

// Kinds of sweep file.
const (
	KindSweep   = "sweep"   // one point per offered rate
	KindSearch  = "search"  // a capacity search: probes, each run one or more times
	KindRepeats = "repeats" // repeated runs of one rate
)

// Kinds of a profile sweep's points (FilePoint.Kind). Its rates are found
// by two probes first, as GuideLLM's sweep profile does: the synchronous
// point (one request at a time, a closed loop of one user, unpaced) and
// the throughput point (every request at once, rate inf, bounded by the
// connection limit). Neither has an offered rate: Rate is 0, as a
// result's config stores both.
const (
	PointSynchronous = "synchronous"
	PointThroughput  = "throughput"
)

// Open reports whether p is an open run at its offered rate, not a probe.
func (p FilePoint) Open() bool { return p.Kind == "" }

// FileKnee names a sweep's knee.
type FileKnee struct {
	Point int     `json:"point"` // 1-based
	Rate  float64 `json:"rate"`
	Why   string  `json:"why"`
}

// FileSearch is a search's answer.
type FileSearch struct {
	Verdict string      `json:"verdict"`
	Low     float64     `json:"low,omitempty"`
	High    float64     `json:"high,omitempty"`
	Message string      `json:"message"`
	Probes  []FileProbe `json:"probes"`
}

// FileProbe is one probe of a search: its verdict and deciding figure in
// each repeat (a repeat stopped early: the largest float, EncodeFigure),
// their median and its bootstrap interval (absent with one repeat).
type FileProbe struct {
	Rate     float64   `json:"rate"`
	Pass     bool      `json:"pass"`
	Why      string    `json:"why,omitempty"`
	Deciding string    `json:"deciding"`
	Figures  []float64 `json:"figures"`
	Median   float64   `json:"median"`
	Lo       *float64  `json:"bootstrap_lo,omitempty"`
	Hi       *float64  `json:"bootstrap_hi,omitempty"`
}

// FilePoint is one run.
type FilePoint struct {
	Rate  float64 `json:"rate"`            // offered; 0 for a profile's probes (PointSynchronous, PointThroughput)
	Probe int     `json:"probe,omitempty"` // 1-based, in a search
	// Kind says which kind of point a profile sweep's run is: empty for
	// an open run at Rate, or one of the probes that found the rates.
	Kind    string  `json:"point_kind,omitempty"`
	Pass    bool    `json:"pass"`
	Stopped string  `json:"stopped_early,omitempty"`
	Result  *Result `json:"result"`
}

// Completed is the point's throughput: completed requests per second of
// the run, from its start to its last response.
func (p FilePoint) Completed() float64 {
	if p.Result.Elapsed <= 0 {
		return 0
	}
	return float64(p.Result.Counts.Completed) / p.Result.Elapsed
}

// EncodeFigure maps the infinity standing for a repeat stopped early (a
// figure past any bound) to the largest float, which JSON can hold;
// DecodeFigure maps it back.
func EncodeFigure(v float64) float64 {
	switch {
	case v > 1.7e308:
		return math.MaxFloat64
	case v < -1.7e308:
		return -math.MaxFloat64
	}
	return v
}

// DecodeFigure is the figure EncodeFigure stored: ±Inf for the largest
// floats.
func DecodeFigure(v float64) float64 {
	switch {
	case v >= math.MaxFloat64:
		return math.Inf(1)
	case v <= -math.MaxFloat64:
		return math.Inf(-1)
	}
	return v
}

// Write writes f as indented JSON.
func (f File) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// SplitPoint splits "FILE#N" into FILE and N (1-based); ok is false when
// name has no such suffix.
func SplitPoint(name string) (file string, n int, ok bool) {
	i := strings.LastIndexByte(name, '#')
	if i < 0 {
		return name, 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return name, 0, false
	}
	return name[:i], n, true
}

// ReadFile reads a sweep file. isSweep is false when r holds something
// else (then err is nil and the caller reads it its own way).
func ReadFile(r io.Reader, name string) (f *File, isSweep bool, err error) {
	var probe struct {
		SweepVersion int `json:"sweep_version"`
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", name, err)
	}
	if json.Unmarshal(data, &probe) != nil || probe.SweepVersion == 0 {
		return nil, false, nil
	}
	if probe.SweepVersion != FileVersion {
		return nil, true, fmt.Errorf("%s: sweep file version %d, this openload reads version %d", name, probe.SweepVersion, FileVersion)
	}
	f = &File{}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, true, fmt.Errorf("%s: %v", name, err)
	}
	return f, true, nil
}

// Whole checks that every point of f holds its result, as rendering the
// whole file needs; the error names the file and the first point without.
func (f *File) Whole(name string) error {
	for i, p := range f.Points {
		if p.Result == nil {
			return fmt.Errorf("%s#%d: the point has no result", name, i+1)
		}
	}
	return nil
}

// Point returns point n (1-based) of f, as Read returns a
// result; the error names the file and how many points it has.
func (f *File) Point(name string, n int) (*Result, error) {
	if n < 1 || n > len(f.Points) || f.Points[n-1].Result == nil {
		return nil, fmt.Errorf("%s#%d: the %s holds points 1 to %d", name, n, f.Kind, len(f.Points))
	}
	return f.Points[n-1].Result, nil
}
