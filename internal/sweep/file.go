package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/openload/openload/result"
)

// FileVersion is the version of the sweep file format.
const FileVersion = 1

// File is a sweep's or a search's JSON file: every point's full result,
// so that `openload report` and `diff` read any point (FILE#N, 1-based).
// It has no "version" key, so a reader of single results refuses it.
type File struct {
	SweepVersion int         `json:"sweep_version"`
	Tool         string      `json:"tool"`
	Kind         string      `json:"kind"` // "sweep" or "search"
	Knee         *FileKnee   `json:"knee,omitempty"`
	Search       *FileSearch `json:"search,omitempty"`
	Points       []FilePoint `json:"points"`
}

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
// each repeat (a repeat stopped early: the largest float), their median
// and its bootstrap interval (absent with one repeat).
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
	Rate    float64        `json:"rate"`
	Probe   int            `json:"probe,omitempty"` // 1-based, in a search
	Pass    bool           `json:"pass"`
	Stopped string         `json:"stopped_early,omitempty"`
	Result  *result.Result `json:"result"`
}

func filePoint(p Point, probe int) FilePoint {
	return FilePoint{Rate: p.Rate, Probe: probe, Pass: p.Pass(), Stopped: p.Stopped, Result: p.Result}
}

// SweepFile is the file of a sweep.
func SweepFile(sw *Sweep) File {
	f := File{SweepVersion: FileVersion, Tool: "openload", Kind: "sweep"}
	for _, p := range sw.Points {
		f.Points = append(f.Points, filePoint(p, 0))
	}
	if sw.Knee >= 0 {
		f.Knee = &FileKnee{Point: sw.Knee + 1, Rate: sw.Points[sw.Knee].Rate, Why: sw.KneeWhy}
	}
	return f
}

// SearchFile is the file of a search.
func SearchFile(s *Search) File {
	f := File{SweepVersion: FileVersion, Tool: "openload", Kind: "search",
		Search: &FileSearch{Verdict: s.Verdict, Low: s.Low, High: s.High, Message: s.Message}}
	for i, p := range s.Probes {
		for _, pt := range p.Points {
			f.Points = append(f.Points, filePoint(pt, i+1))
		}
		fp := FileProbe{Rate: p.Rate, Pass: p.Pass, Why: p.Why, Deciding: p.Deciding.Expr, Median: finite(p.Median)}
		for _, v := range p.Figures {
			fp.Figures = append(fp.Figures, finite(v))
		}
		if !math.IsNaN(p.Lo) {
			lo, hi := finite(p.Lo), finite(p.Hi)
			fp.Lo, fp.Hi = &lo, &hi
		}
		f.Search.Probes = append(f.Search.Probes, fp)
	}
	return f
}

// finite maps the infinity standing for a repeat stopped early to the
// largest float, which JSON can hold.
func finite(v float64) float64 {
	switch {
	case v > 1.7e308:
		return 1.7976931348623157e308
	case v < -1.7e308:
		return -1.7976931348623157e308
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

// Point returns point n (1-based) of f, as recorder.ReadResult returns a
// result; the error names the file and how many points it has.
func (f *File) Point(name string, n int) (*result.Result, error) {
	if n < 1 || n > len(f.Points) || f.Points[n-1].Result == nil {
		return nil, fmt.Errorf("%s#%d: the %s holds points 1 to %d", name, n, f.Kind, len(f.Points))
	}
	return f.Points[n-1].Result, nil
}

// RepeatsFile is the file of repeated runs of one rate.
func RepeatsFile(points []Point) File {
	f := File{SweepVersion: FileVersion, Tool: "openload", Kind: "repeats"}
	for _, p := range points {
		f.Points = append(f.Points, filePoint(p, 0))
	}
	return f
}
