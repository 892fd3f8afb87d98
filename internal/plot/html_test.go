package plot

import (
	"bytes"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkOffline fails unless the page loads nothing: no element with a
// src or href, no CSS url() or @import, no script that fetches, and every
// http(s) address in it an identifier (the SVG namespaces), the embedded
// library's credit, or text starting with one of the prefixes (the run's
// target, which the page names and never loads).
func checkOffline(t *testing.T, page string, text ...string) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, banned := range []string{" src=", " href=", "url(", "@import", "<link", "<iframe", "<img", "fetch(", "xmlhttprequest", "websocket", "sendbeacon"} {
		if i := strings.Index(lower, banned); i >= 0 {
			t.Errorf("page may load something: %q at %.80q", banned, page[max(0, i-20):])
		}
	}
	allowed := map[string]bool{
		"http://www.w3.org/2000/svg": true, "http://www.w3.org/1999/xlink": true, // SVG namespaces
		"https://github.com/leeoniya/uPlot": true, // uPlot's credit, in comments
	}
next:
	for _, u := range regexp.MustCompile(`https?://[^\s"'()<>]*`).FindAllString(page, -1) {
		for _, p := range text {
			if strings.HasPrefix(u, p) {
				continue next
			}
		}
		if !allowed[u] {
			t.Errorf("page names an address: %s", u)
		}
	}
}

// reportText is the text report as the page shows it: each table block's
// text and each prose line, in order.
func reportText(page string) string {
	var b strings.Builder
	for _, m := range regexp.MustCompile(`(?s)<pre class="(table|prose)">(.*?)</pre>`).FindAllStringSubmatch(page, -1) {
		if m[1] == "table" {
			b.WriteString(html.UnescapeString(m[2]))
			continue
		}
		for _, l := range regexp.MustCompile(`(?s)<span style="--h:\d+">(.*?)</span>`).FindAllStringSubmatch(m[2], -1) {
			b.WriteString(html.UnescapeString(l[1]) + "\n")
		}
	}
	return b.String()
}

const sampleReport = `openload · constant 100/s for 1m40s · GET http://127.0.0.1:43539/predict?a=1&b=<2>
target: built-in stub model server in openload's process (1 worker × 1ms, policy none, one 10s stall 45s after its first request): its work is in the generator's figures

┌───────────────┬───────┬──────────┐
│ ms            │   p50 │      p90 │
├───────────────┼───────┼──────────┤
│ response time │ 1.643 │ 1253.375 │
└───────────────┴───────┴──────────┘
response = done − scheduled (what users waited)

counts   expected 10000 · scheduled 10000 · sent 10000 · completed 10000 · errors 0 · timeouts 0 · unfinished 0   ✓ every request accounted for

checks
  PASS  accounting        completed 10000 + errors 0 + timeouts 0 + unfinished 0 = scheduled 10000
  WARN  send delay        p99 9125.887 ms > 1.000 ms: requests left late, mostly waiting for one of 1 connections (raise the connection limit to send them on time)
`

// TestPageStructure checks what a reader's browser needs of the page,
// without a browser: it loads nothing, scales to the window, holds the
// whole text report with tables apart from prose, and embeds uPlot with
// its licence and the data it draws.
func TestPageStructure(t *testing.T) {
	res := partialResult(t)
	charts, err := ReportCharts(res)
	if err != nil {
		t.Fatal(err)
	}
	charts[1].Series[1].Name = "</script><script>alert(1)</script>"
	var b bytes.Buffer
	if err := (Page{Title: "openload · x", Subtitle: []string{Identity(res)}, Text: sampleReport, Charts: charts}).Write(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkOffline(t, page, "http://127.0.0.1:")
	if got := reportText(page); got != sampleReport {
		t.Errorf("the text report as the page shows it:\n%s\nwant:\n%s", got, sampleReport)
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("a series name broke out of the data")
	}
	back, err := ReadData(b.Bytes())
	if err != nil || len(back) != len(charts) || back[1].Series[1].Name != charts[1].Series[1].Name || back[1].Series[0].End != 2.5 {
		t.Errorf("data read back: %v, %+v", err, back)
	}
	svgs := regexp.MustCompile(`<svg[^>]*>`).FindAllString(page, -1)
	if len(svgs) != len(charts) {
		t.Errorf("%d SVGs for %d charts", len(svgs), len(charts))
	}
	for _, s := range svgs {
		if !strings.Contains(s, `viewBox="0 0 720 340"`) {
			t.Errorf("SVG without the viewBox it scales by: %s", s)
		}
	}
	for _, want := range []string{
		`<meta name="viewport" content="width=device-width, initial-scale=1">`,
		`.static svg { display: block; width: 100%; height: auto;`,
		`pre.table { overflow-x: auto; white-space: pre;`,
		`pre.prose { white-space: pre-wrap;`,
		`<span style="--h:26">  PASS  accounting`, `<span style="--h:9">counts   expected`,
		`<figure id="latency">`, `<figure id="timeline">`, `<figure id="timeline-p99">`,
		`<p class="note">No line over a second: no request ended in it.</p>`,
		"/* uPlot " + uplotVersion + ",", "Permission is hereby granted, free of charge", "var uPlot=",
		"<h1>openload · x</h1>", `<p class="id">constant 100/s for 2.5s · GET http://127.0.0.1:1/predict · started 2026-01-02 03:04:05 UTC</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The page's titles are text, not drawn into its SVGs twice.
	if strings.Count(page, ">Requests per second<") != 1 {
		t.Errorf("the timeline's title is on the page %d times, want once", strings.Count(page, ">Requests per second<"))
	}
}

func TestHangingIndent(t *testing.T) {
	for line, want := range map[string]int{
		"counts   expected 10000 · scheduled 10000":            9,
		"  PASS  accounting        completed 10000 + errors 0": 26,
		"response = done − scheduled (what users waited)":      0,
		"":                              0,
		"hint:   raise -c":              8,
		strings.Repeat("x", 31) + "  y": 0,
	} {
		if got := hangingIndent(line); got != want {
			t.Errorf("hangingIndent(%q) = %d, want %d", line, got, want)
		}
	}
}

// TestPageScriptParses runs node's syntax check on the page's script,
// where node is installed (.ci/run installs it for the interop test).
func TestPageScriptParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	f := filepath.Join(t.TempDir(), "page.js")
	if err := os.WriteFile(f, []byte(pageJS), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
		t.Errorf("node --check page.js: %v\n%s", err, out)
	}
}
