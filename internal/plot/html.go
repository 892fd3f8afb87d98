package plot

import (
	"bytes"
	"encoding/json"
	"html/template"
	"io"
)

// Page is a self-contained HTML report: a title, preformatted text (the
// terminal report) and charts. Every chart is an inline SVG, and the data
// behind all charts is embedded as JSON in a <script type="application/json"
// id="openload-data"> element, so the page needs no network and its numbers
// can be read back by tools and tests.
type Page struct {
	Title  string
	Text   string
	Charts []Chart
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 12px; }
figure { margin: 1.5em 0; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .SVGs}}<figure id="{{.ID}}">{{.SVG}}</figure>
{{end}}{{if .Text}}<h2>Report</h2>
<pre>{{.Text}}</pre>
{{end}}<script type="application/json" id="openload-data">{{.Data}}</script>
</body>
</html>
`))

type svgChart struct {
	ID  string
	SVG template.HTML
}

// Write renders the page.
func (p Page) Write(w io.Writer) error {
	var svgs []svgChart
	for _, c := range p.Charts {
		var b bytes.Buffer
		if err := c.Render(&b, "svg", 720, 360); err != nil {
			return err
		}
		svg := b.Bytes()
		if i := bytes.Index(svg, []byte("<svg")); i > 0 { // drop the XML prolog
			svg = svg[i:]
		}
		svgs = append(svgs, svgChart{ID: c.ID, SVG: template.HTML(svg)})
	}
	data, err := json.Marshal(p.Charts)
	if err != nil {
		return err
	}
	return pageTmpl.Execute(w, struct {
		Title, Text string
		SVGs        []svgChart
		Data        template.JS
	}{p.Title, p.Text, svgs, template.JS(data)})
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

type dataError string

func (e dataError) Error() string { return string(e) }

const errNoData = dataError("no openload chart data in the page")
