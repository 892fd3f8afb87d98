package plot

import (
	"bytes"
	_ "embed" // the vendored charting library
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// The interactive charts are drawn by uPlot (uplot/README.md: version,
// source, how to update), inlined into the page with its licence so the
// page needs no network. Each chart is also in the page as a static SVG,
// shown when scripts do not run and when printing.
var (
	//go:embed uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed uplot/uPlot.min.css
	uplotCSS string
	//go:embed uplot/LICENSE
	uplotLicense string
	//go:embed page.js
	pageJS string
)

const uplotVersion = "1.6.32"

// Page is a self-contained HTML report: a title, the runs' identities,
// charts and preformatted text (the terminal report). The data behind all
// charts is embedded as JSON in a <script type="application/json"
// id="openload-data"> element, from which the interactive charts are drawn
// and which tools and tests can read back (ReadData).
type Page struct {
	Title    string
	Subtitle []string // one line per run (Identity)
	Text     string
	Charts   []Chart
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
{{.UplotCSS}}
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; color: #222; background: #fff;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; }
main { max-width: 1760px; margin: 0 auto; padding: 16px 20px 32px; }
h1 { font-size: 1.35rem; margin: 0 0 .2rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 0; }
.id { color: #555; font-size: .9rem; margin: 0; overflow-wrap: anywhere; }
header { margin-bottom: 1.2rem; }
.charts { display: grid; gap: 1.5rem 2rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 640px), 1fr)); }
figure { margin: 0; min-width: 0; }
figcaption { margin-bottom: .4rem; }
figcaption .id, .note { color: #555; font-size: .8rem; margin: 0; }
.static svg { display: block; width: 100%; height: auto; max-height: 70vh; }
.js .static { display: none; }
.live .uplot { width: 100%; font-family: inherit; }
.live .u-legend { font-size: 13px; text-align: left; margin: 0; }
.live .u-legend .u-series > * { padding: 2px 4px; }
.live .u-legend .u-marker.swatch { width: auto; height: auto; vertical-align: middle; margin-right: 6px; }
.live .u-legend .u-marker.swatch svg { display: block; }
.hint, .span-note { color: #666; font-size: .8rem; margin: .2rem 0 0; }
.hint { margin: -.6rem 0 1rem; }
.span-note i { display: inline-block; width: 1.6em; height: .9em; vertical-align: middle; margin-right: .35em; background: rgba(128,128,128,.16); }
.report { margin-top: 2rem; }
.report h2 { margin-bottom: .5rem; }
.text { background: #f6f7f8; border-radius: 4px; padding: 10px 12px; }
.text pre { margin: 0; font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; }
/* Box-drawing characters fill the line only when lines are one em apart. */
pre.table { overflow-x: auto; white-space: pre; line-height: 1.15; padding-bottom: 2px; }
pre.prose { white-space: pre-wrap; overflow-wrap: anywhere; }
pre.prose span { display: block; min-height: 1.4em;
  --i: calc(var(--h, 0) * 1ch); padding-left: var(--i); text-indent: calc(-1 * var(--i)); }
@media (max-width: 700px) {
  main { padding: 10px 10px 24px; }
  h1 { font-size: 1.15rem; }
  .text { padding: 8px; }
  .text pre { font-size: 11px; }
  pre.prose span { --i: min(calc(var(--h, 0) * 1ch), 4ch); }
}
@media print {
  .js .static { display: block; }
  .live { display: none; }
  .charts { display: block; }
  figure { break-inside: avoid; margin-bottom: 1rem; }
}
</style>
</head>
<body>
<main>
<header>
<h1>{{.Title}}</h1>
{{range .Subtitle}}<p class="id">{{.}}</p>
{{end}}</header>
<section class="charts">
{{range .Figures}}<figure id="{{.ID}}">
<figcaption><h2>{{.Title}}</h2>{{range .Subtitle}}<p class="id">{{.}}</p>{{end}}{{if .Note}}<p class="note">{{.Note}}</p>{{end}}</figcaption>
<div class="static">{{.SVG}}</div>
</figure>
{{end}}</section>
{{if .Blocks}}<section class="report">
<h2>Report</h2>
<div class="text">
{{range .Blocks}}{{if .Table}}<pre class="table">{{range .Lines}}{{.Text}}
{{end}}</pre>
{{else}}<pre class="prose">{{range .Lines}}<span style="--h:{{.Indent}}">{{.Text}}</span>{{end}}</pre>
{{end}}{{end}}</div>
</section>
{{end}}</main>
<script type="application/json" id="openload-data">{{.Data}}</script>
<script>
{{.UplotJS}}
</script>
<script>
{{.PageJS}}
</script>
</body>
</html>
`))

type figure struct {
	ID, Title, Note string
	Subtitle        []string
	SVG             template.HTML
}

// textLine is one line of the text report; Indent is the column its
// wrapped continuation lines start at.
type textLine struct {
	Indent int
	Text   string
}

// textBlock is a run of lines: a table (box-drawing lines, which scroll
// sideways in their own block rather than wrap) or prose (which wraps,
// each line with a hanging indent).
type textBlock struct {
	Table bool
	Lines []textLine
}

// isTableLine reports whether line is part of a box-drawn table.
func isTableLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	r, _ := utf8.DecodeRuneInString(t)
	return strings.ContainsRune("┌├│└╭╰┬┴┼", r)
}

// hangingIndent is where the text of a label-and-value line starts: after
// the last run of two or more spaces that begins in the first 30 columns
// ("counts   expected …" → 9, "  PASS  accounting        completed …" →
// 26); 0 for a line without one.
func hangingIndent(line string) int {
	indent, col, run := 0, 0, 0
	for _, r := range line {
		if r == ' ' {
			run++
		} else {
			if run >= 2 && col-run < 30 {
				indent = col
			}
			run = 0
		}
		col++
	}
	return indent
}

// textBlocks splits the text report into tables and prose.
func textBlocks(text string) []textBlock {
	var out []textBlock
	if text == "" {
		return nil
	}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		table := isTableLine(line)
		if n := len(out); n == 0 || out[n-1].Table != table {
			out = append(out, textBlock{Table: table})
		}
		b := &out[len(out)-1]
		l := textLine{Text: line}
		if !table {
			l.Indent = hangingIndent(line)
		}
		b.Lines = append(b.Lines, l)
	}
	return out
}

// Write renders the page.
func (p Page) Write(w io.Writer) error {
	var figs []figure
	for _, c := range p.Charts {
		var b bytes.Buffer
		if err := c.render(&b, "svg", 720, 340, false); err != nil {
			return err
		}
		svg := b.Bytes()
		if i := bytes.Index(svg, []byte("<svg")); i > 0 { // drop the XML prolog
			svg = svg[i:]
		}
		f := figure{ID: c.ID, Title: c.Title, Note: c.Note, SVG: template.HTML(svg)}
		if !slices.Equal(c.Subtitle, p.Subtitle) {
			f.Subtitle = c.Subtitle
		}
		figs = append(figs, f)
	}
	data, err := json.Marshal(p.Charts)
	if err != nil {
		return err
	}
	return pageTmpl.Execute(w, struct {
		Title           string
		Subtitle        []string
		Figures         []figure
		Blocks          []textBlock
		Data            template.JS
		UplotCSS        template.CSS
		UplotJS, PageJS template.JS
	}{p.Title, p.Subtitle, figs, textBlocks(p.Text), template.JS(data), template.CSS(uplotCSS),
		template.JS("/* uPlot " + uplotVersion + ", https://github.com/leeoniya/uPlot\n\n" + uplotLicense + "*/\n" + uplotJS),
		template.JS(pageJS)})
}

// ReadData extracts the charts' data from a page written by Write.
func ReadData(page []byte) ([]Chart, error) {
	start := []byte(`<script type="application/json" id="openload-data">`)
	i := bytes.Index(page, start)
	if i < 0 {
		return nil, errNoData
	}
	rest := page[i+len(start):]
	j := bytes.Index(rest, []byte("</script>"))
	if j < 0 {
		return nil, errNoData
	}
	var charts []Chart
	err := json.Unmarshal(rest[:j], &charts)
	return charts, err
}

var errNoData = errors.New("no openload chart data in the page")
