package sweep

import (
	"math"

	"github.com/openload/openload/result"
)

// The files of a sweep, a search and repeats, in result's sweep file
// schema (result/sweepfile.go): what -o writes and what every rendering,
// live or of a saved file, reads.

func filePoint(p Point, probe int) result.FilePoint {
	rate := p.Rate
	if math.IsInf(rate, 1) {
		rate = 0 // the throughput probe: JSON holds no +Inf, Kind says it
	}
	return result.FilePoint{Rate: rate, Probe: probe, Kind: p.Kind, Pass: p.Pass(), Stopped: p.Stopped, Result: p.Result}
}

func newFile(kind string) result.File {
	return result.File{SweepVersion: result.FileVersion, Tool: "openload", Kind: kind}
}

// SweepFile is the file of a sweep.
func SweepFile(sw *Sweep) result.File {
	f := newFile(result.KindSweep)
	f.KneeFactor = sw.Factor
	for _, p := range sw.Points {
		f.Points = append(f.Points, filePoint(p, 0))
	}
	if sw.Knee >= 0 {
		f.Knee = &result.FileKnee{Point: sw.Knee + 1, Rate: sw.Points[sw.Knee].Rate, Why: sw.KneeWhy}
	}
	return f
}

// SearchFile is the file of a search.
func SearchFile(s *Search) result.File {
	f := newFile(result.KindSearch)
	f.Search = &result.FileSearch{Verdict: s.Verdict, Low: s.Low, High: s.High, Message: s.Message}
	for i, p := range s.Probes {
		for _, pt := range p.Points {
			f.Points = append(f.Points, filePoint(pt, i+1))
		}
		fp := result.FileProbe{Rate: p.Rate, Pass: p.Pass, Why: p.Why, Deciding: p.Deciding.Expr, Median: result.EncodeFigure(p.Median)}
		for _, v := range p.Figures {
			fp.Figures = append(fp.Figures, result.EncodeFigure(v))
		}
		if !math.IsNaN(p.Lo) {
			lo, hi := result.EncodeFigure(p.Lo), result.EncodeFigure(p.Hi)
			fp.Lo, fp.Hi = &lo, &hi
		}
		f.Search.Probes = append(f.Search.Probes, fp)
	}
	return f
}

// RepeatsFile is the file of repeated runs of one rate.
func RepeatsFile(points []Point) result.File {
	f := newFile(result.KindRepeats)
	for _, p := range points {
		f.Points = append(f.Points, filePoint(p, 0))
	}
	return f
}
