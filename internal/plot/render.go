package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Layout, in points.
const (
	margin    = 14 // around everything
	headerGap = 8  // between the header (titles, legend) and the plot
	pngDPI    = 144
)

var (
	sans      = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold  = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
	textColor = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	subColor  = color.NRGBA{0x55, 0x55, 0x55, 0xff}
	spanColor = color.NRGBA{0x80, 0x80, 0x80, 0x24}
)

func textStyle(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(f, size), Handler: text.Plain{Fonts: font.DefaultCache}}
}

// nrgba parses "#rrggbb" with an opacity; a malformed colour is black.
func nrgba(s string, opacity float64) color.NRGBA {
	c := color.NRGBA{A: 0xff}
	if len(s) == 7 && s[0] == '#' {
		if v, err := strconv.ParseUint(s[1:], 16, 32); err == nil {
			c.R, c.G, c.B = uint8(v>>16), uint8(v>>8), uint8(v)
		}
	}
	if opacity > 0 && opacity < 1 {
		c.A = uint8(math.Round(opacity * 255))
	}
	return c
}

func (s Style) lineStyle() draw.LineStyle {
	ls := draw.LineStyle{Color: nrgba(s.Color, s.Opacity), Width: vg.Points(s.Width)}
	for _, d := range s.Dash {
		ls.Dashes = append(ls.Dashes, vg.Points(d))
	}
	return ls
}

// Render draws c as "svg" or "png" of the given size in points: title,
// subtitle and legend at the top, the plot under them, with margins. A PNG
// has 2 pixels per point, sharp on high-density screens.
func (c Chart) Render(w io.Writer, format string, width, height vg.Length) error {
	return c.render(w, format, width, height, true)
}

// render is Render; without a header (the HTML page writes the titles as
// text) it draws only the legend above the plot.
func (c Chart) render(w io.Writer, format string, width, height vg.Length, header bool) error {
	var cv vg.CanvasWriterTo
	switch format {
	case "svg":
		cv = vgsvg.New(width, height)
	case "png":
		cv = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}
	default:
		return fmt.Errorf("unsupported chart format %q (svg or png)", format)
	}
	if err := c.draw(draw.New(cv), header); err != nil {
		return err
	}
	if format != "svg" {
		_, err := cv.WriteTo(w)
		return err
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return err
	}
	// gonum names the font it measured the text with; viewers without
	// Liberation Sans fall back to Arial, whose metrics Liberation Sans
	// was made to match, so labels keep their measured widths.
	_, err := w.Write(bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;")))
	return err
}

// legendEntry is one item of the legend: a series' line or a span's
// swatch.
type legendEntry struct {
	name  string
	line  *draw.LineStyle
	ring  bool // a ring in the middle of the line
	patch color.Color
}

func (c Chart) legend() []legendEntry {
	var out []legendEntry
	if len(c.Bars) > 0 {
		return nil
	}
	for _, s := range c.Series {
		ls := s.lineStyle()
		out = append(out, legendEntry{name: s.Name, line: &ls, ring: s.Marker == ring})
	}
	for _, sp := range c.Spans {
		out = append(out, legendEntry{name: sp.Label, patch: spanColor})
	}
	return out
}

// draw lays out the header and draws the plot into dc.
func (c Chart) draw(dc draw.Canvas, header bool) error {
	dc.FillPolygon(color.White, []vg.Point{dc.Min, {X: dc.Max.X, Y: dc.Min.Y}, dc.Max, {X: dc.Min.X, Y: dc.Max.Y}})
	left, right := dc.Min.X+margin, dc.Max.X-margin
	y := dc.Max.Y - margin // the top of the next line of the header
	line := func(sty text.Style, txt string) {
		h := sty.Height(txt)
		dc.FillText(sty, vg.Point{X: left, Y: y - h + sty.FontExtents().Descent}, txt)
		y -= h
	}
	if header {
		line(textStyle(sansBold, 13, textColor), c.Title)
		y -= 3
		for _, s := range c.Subtitle {
			line(textStyle(sans, 9, subColor), s)
			y -= 1
		}
		if c.Note != "" {
			line(textStyle(sans, 9, subColor), c.Note)
			y -= 1
		}
		y -= 4
	}
	if entries := c.legend(); len(entries) > 0 {
		const thumb, gap, sep = 26, 5, 16
		sty := textStyle(sans, 9.5, textColor)
		h := sty.Height("M") + 2
		x := left
		y -= h
		for _, e := range entries {
			w := thumb + gap + sty.Width(e.name)
			if x > left && x+w > right {
				x, y = left, y-h-2
			}
			mid := y + h/2
			if e.line != nil {
				dc.StrokeLine2(*e.line, x, mid, x+thumb, mid)
				if e.ring {
					dc.DrawGlyph(ringGlyph(e.line.Color), vg.Point{X: x + thumb/2, Y: mid})
				}
			} else {
				dc.FillPolygon(e.patch, []vg.Point{{X: x, Y: y}, {X: x + thumb, Y: y}, {X: x + thumb, Y: y + h}, {X: x, Y: y + h}})
			}
			dc.FillText(sty, vg.Point{X: x + thumb + gap, Y: mid - sty.Height("M")/2 + sty.FontExtents().Descent}, e.name)
			x += w + sep
		}
	}
	p, err := c.Plot()
	if err != nil {
		return err
	}
	p.Draw(draw.Crop(dc, margin-4, -margin, margin-4, y-headerGap-dc.Max.Y))
	return nil
}

// percentileTicks label the percentile axis.
var percentileTicks = gplot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"}, {Value: 1e6, Label: "max"},
}

// linearTicks labels a linear axis at 1, 2 or 5 times a power of ten,
// the finest of them that gives at most 10 labels, with an unlabelled tick
// halfway between (gonum's default ticks label only 3 or 4 values, too few
// to read a second off a run's timeline).
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/10)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if (hi-lo)/(m*mag) <= 10 {
			step = m * mag
			break
		}
	}
	prec := max(0, int(-math.Floor(math.Log10(step))))
	var ticks []gplot.Tick
	for i := math.Ceil(lo/step*2) / 2; i*step <= hi*(1+1e-9); i += 0.5 {
		v := i * step
		t := gplot.Tick{Value: v}
		if i == math.Trunc(i) {
			t.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// polylines are the lines that draw s: its points joined, or for a
// per-second series one step line per run of seconds with data.
func (s Series) polylines() []plotter.XYs {
	if s.Step <= 0 {
		xys := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xys[i].X, xys[i].Y = s.X[i], s.Y[i]
		}
		return []plotter.XYs{xys}
	}
	var out []plotter.XYs
	var run plotter.XYs
	for i := range s.X {
		to := s.X[i] + s.Step
		switch {
		case i+1 < len(s.X) && s.X[i+1]-s.X[i] <= s.Step:
			to = s.X[i+1]
		case i+1 == len(s.X) && s.End > s.X[i]:
			to = s.End
		}
		run = append(run, plotter.XY{X: s.X[i], Y: s.Y[i]}, plotter.XY{X: to, Y: s.Y[i]})
		if to != s.X[min(i+1, len(s.X)-1)] || i+1 == len(s.X) {
			out = append(out, run)
			run = nil
		}
	}
	return out
}

// Plot builds the gonum plot of c, without title or legend (Render draws
// them).
func (c Chart) Plot() (*gplot.Plot, error) {
	p := gplot.New()
	p.X.Label.Text, p.Y.Label.Text = c.XLabel, c.YLabel
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		// Only the fonts and colours change: gonum's styles hold each
		// label's alignment and rotation.
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
		a.Label.TextStyle.Color, a.Tick.Label.Color = textColor, textColor
		a.Label.Padding = vg.Points(6)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
	grid.Horizontal.Color = grid.Vertical.Color
	if len(c.Bars) > 0 && len(c.Series) > 0 {
		// Bars stand at 0 … n−1 on an axis from −½ to n−½, each slot as
		// wide as the plot's width over n; the share axis is 0–100.
		grid.Vertical.Width = 0
		p.Add(grid)
		s := c.Series[0]
		p.Add(bars{values: s.Y, labels: s.Labels, color: nrgba(s.Color, 1)})
		p.NominalX(c.Bars...)
		p.X.Min, p.X.Max = -0.5, float64(len(c.Bars))-0.5
		p.Y.Min, p.Y.Max = 0, 100
		p.Y.Tick.Marker = linearTicks{}
		return p, nil
	}
	top := 0.0
	for _, s := range c.Series {
		for _, y := range s.Y {
			top = math.Max(top, y)
		}
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.05
	for _, sp := range c.Spans {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: sp.From, Y: 0}, {X: sp.To, Y: 0}, {X: sp.To, Y: top}, {X: sp.From, Y: top}})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", sp.Label, err)
		}
		poly.Color, poly.LineStyle.Width = spanColor, 0
		p.Add(poly)
	}
	p.Add(grid)
	for _, s := range c.Series {
		for _, xys := range s.polylines() {
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s.Name, err)
			}
			l.LineStyle = s.lineStyle()
			p.Add(l)
		}
		if s.Marker == ring && len(s.X) > 0 {
			xys := make(plotter.XYs, len(s.X))
			for i := range s.X {
				xys[i].X, xys[i].Y = s.X[i], s.Y[i]
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s.Name, err)
			}
			sc.GlyphStyle = ringGlyph(nrgba(s.Color, 1))
			p.Add(sc)
		}
	}
	p.Y.Min, p.Y.Max = 0, top
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	if c.LogX {
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = percentileTicks
	}
	if c.XMax > c.XMin {
		p.X.Min, p.X.Max = c.XMin, c.XMax
	}
	return p, nil
}

// ringGlyph is the ring marker (Style.Marker) in colour c.
func ringGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(3.2), Shape: draw.RingGlyph{}}
}

// Bar widths, in points: a bar takes barFill of its slot, at most
// maxBarWidth.
const (
	barFill     = 0.6
	maxBarWidth = 90
)

// bars draws a bar chart in data coordinates, unlike gonum's BarChart,
// whose bars have one width whatever the plot's: value i is a bar centred
// on x = i, labelled above (inside its top, in white, when the bar reaches
// the top of the plot) with labels[i], or, where that is wider than the
// slot, with its first word (the share), or not at all.
type bars struct {
	values []float64
	labels []string
	color  color.Color
}

func (b bars) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(sans, 9.5, textColor)
	for i, v := range b.values {
		x := trX(float64(i))
		slot := trX(float64(i)+0.5) - trX(float64(i)-0.5)
		half := min(slot*barFill, maxBarWidth) / 2
		y0, y1 := trY(0), trY(math.Min(v, p.Y.Max))
		if y1 > y0 {
			c.FillPolygon(b.color, []vg.Point{{X: x - half, Y: y0}, {X: x + half, Y: y0}, {X: x + half, Y: y1}, {X: x - half, Y: y1}})
		}
		if i >= len(b.labels) {
			continue
		}
		label := b.labels[i]
		if sty.Width(label) > slot-4 {
			label, _, _ = strings.Cut(label, " (")
		}
		if sty.Width(label) > slot-4 {
			continue
		}
		ls := sty
		ls.XAlign, ls.YAlign = draw.XCenter, draw.YBottom
		at := y1 + 3
		if at+sty.Height(label) > c.Max.Y {
			ls.Color, ls.YAlign, at = color.White, draw.YTop, y1-3
		}
		c.FillText(ls, vg.Point{X: x, Y: at}, label)
	}
}

// DataRange is the slots' and the share axis' whole range.
func (b bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(b.values)) - 0.5, 0, 100
}
