package plot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/plot"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// The HTML pages in a real browser: Debian's chromium, headless, loads a
// run's page and a sweep's page from files, made the way `openload report
// --html` makes them from testdata/browser-run.json (120/s for 3 s against
// the built-in stub: model and fallback answers, a drain) and
// testdata/browser-sweep.json (20, 60 and 120/s, a knee at 120/s). A probe
// script put at the top of each page's head (here, never in the product)
// records errors and console.error calls from the start, and after the
// page has loaded writes what it finds into the DOM, which chromium dumps:
// every chart drawn by the page's script with each of its series (the
// data-drawn count page.js keeps), its legend entries with their line
// swatches and no "—", before and while the middle of its plot is hovered
// (a synthetic mouse move), every bar labelled, and nothing of a chart nor
// the page wider than the 1,280 px window.
//
// .ci/run installs chromium (apt-get install chromium) and sets
// OPENLOAD_INTEROP, as for cmd/openload's outside readers
// (cmd/openload/interop_test.go, interopRequired): without chromium the
// test skips, but fails when OPENLOAD_INTEROP is set. Loopback and files
// only: the pages load nothing, and chromium resolves no host name.
// About a second a page.

// browserRequired is cmd/openload's interopRequired.
const browserRequired = "OPENLOAD_INTEROP"

// windowWidth is the narrowest desktop window the pages must fit.
const windowWidth = 1280

// probeJS is the test's script: see the comment above.
const probeJS = `<script>
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push("error: " + e.message + " (" + (e.filename || "page") + ":" + e.lineno + ")");
  });
  window.addEventListener("unhandledrejection", function (e) { errors.push("unhandled rejection: " + e.reason); });
  var consoleError = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return consoleError.apply(console, arguments);
  };
  function name(el) {
    return el.tagName.toLowerCase() + (el.className && el.className.baseVal == null ? "." + el.className.split(" ").join(".") : "");
  }
  function legend(fig) {
    var out = [];
    fig.querySelectorAll(".live .u-legend .u-series").forEach(function (row) {
      var label = row.querySelector(".u-label"), value = row.querySelector(".u-value");
      out.push((label ? label.textContent : "") + ": " + (value ? value.textContent : ""));
    });
    return out;
  }
  function findings() {
    var W = document.documentElement.clientWidth;
    var out = { width: W, scroll_width: document.documentElement.scrollWidth, errors: errors, charts: [] };
    var data = document.getElementById("openload-data");
    (data ? JSON.parse(data.textContent) : []).forEach(function (c) {
      var fig = document.getElementById(c.id);
      var f = { id: c.id, bars: (c.bars || []).length, series: 0, legend_values: [], cut: [] };
      (c.series || []).forEach(function (s) {
        if ((s.y || []).some(function (v) { return v != null; })) {
          f.series++;
        }
      });
      if (!fig) {
        out.charts.push(f);
        return;
      }
      f.js = fig.classList.contains("js");
      f.drawn = fig.dataset.drawn == null ? -1 : Number(fig.dataset.drawn);
      f.labels = fig.dataset.labels == null ? -1 : Number(fig.dataset.labels);
      var canvas = fig.querySelector(".live canvas");
      f.canvas = canvas ? [canvas.clientWidth, canvas.clientHeight] : null;
      f.swatches = fig.querySelectorAll(".live .u-legend .u-series .swatch svg").length;
      f.legend_values = legend(fig);
      var r = fig.getBoundingClientRect();
      f.box = [Math.round(r.left), Math.round(r.right)];
      // The outermost element past an edge only: its contents are too.
      var cut = [];
      [fig].concat(Array.prototype.slice.call(fig.querySelectorAll("*"))).forEach(function (el) {
        var b = el.getBoundingClientRect();
        if (b.width > 0 && b.height > 0 && el.getClientRects().length && (b.left < -0.5 || b.right > W + 0.5)) {
          if (cut.indexOf(el.parentElement) < 0) {
            f.cut.push(name(el) + " " + Math.round(b.left) + "–" + Math.round(b.right) + " px");
          }
          cut.push(el);
        }
      });
      out.charts.push(f);
    });
    // Then hover the middle of each plot (charts of one x share the
    // cursor, so only after every static legend is read): the legend then
    // holds the values there.
    out.charts.forEach(function (f) {
      var fig = document.getElementById(f.id);
      var over = fig && fig.querySelector(".live .u-over");
      if (over) {
        var o = over.getBoundingClientRect();
        over.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: o.left + o.width / 2, clientY: o.top + o.height / 2 }));
        f.hover_values = legend(fig);
      }
    });
    var el = document.createElement("script");
    el.type = "application/json";
    el.id = "browser-findings";
    el.textContent = JSON.stringify(out).replace(/</g, "\\u003c");
    document.body.appendChild(el);
  }
  window.addEventListener("load", function () { setTimeout(findings, 100); });
})();
</script>
`

// findings are what probeJS writes.
type findings struct {
	Width       int       `json:"width"`
	ScrollWidth int       `json:"scroll_width"`
	Errors      []string  `json:"errors"`
	Charts      []chartIs `json:"charts"`
}

type chartIs struct {
	ID           string   `json:"id"`
	Bars         int      `json:"bars"`
	Series       int      `json:"series"` // series with a point
	JS           bool     `json:"js"`     // drawn by page.js, the static SVG hidden
	Drawn        int      `json:"drawn"`
	Labels       int      `json:"labels"`
	Canvas       []int    `json:"canvas"`
	Swatches     int      `json:"swatches"`
	LegendValues []string `json:"legend_values"` // before hover
	HoverValues  []string `json:"hover_values"`  // hovering the plot's middle
	Box          []int    `json:"box"`
	Cut          []string `json:"cut"`
}

func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(browserRequired) != "" {
		t.Fatalf("chromium is not installed, and %s is set (apt-get install chromium)", browserRequired)
	}
	t.Skipf("chromium is not installed: .ci/run installs it (apt-get install chromium; set %s=1 to fail instead)", browserRequired)
	return ""
}

// TestPagesInBrowser: see the comment at the top of the file.
func TestPagesInBrowser(t *testing.T) {
	chromium := chromiumOrSkip(t)
	run := readRun(t, "testdata/browser-run.json")
	var text bytes.Buffer
	if err := report.Text(&text, run); err != nil {
		t.Fatal(err)
	}
	runPage, err := report.RunPage(run, text.String())
	if err != nil {
		t.Fatal(err)
	}
	sweepPage, err := report.SweepPage(readSweep(t, "testdata/browser-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name string
		page plot.Page
		ids  []string // the charts the page must have, at least
	}{
		{"run", runPage, []string{"latency", "timeline", "timeline-p99", "class-0"}},
		{"sweep", sweepPage, []string{"sweep-latency", "sweep-throughput"}},
	} {
		t.Run(p.name, func(t *testing.T) {
			f := loadPage(t, chromium, p.page)
			checkFindings(t, f, p.ids)
		})
	}
}

func readRun(t *testing.T, path string) *result.Result {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	res, err := result.Read(fh, path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func readSweep(t *testing.T, path string) *result.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, ok, err := result.ReadFile(fh, path)
	if err != nil || !ok {
		t.Fatalf("%s: a sweep file? %v, %v", path, ok, err)
	}
	return f
}

// loadPage writes page with the probe to a file, has chromium load it in
// a 1,280 px window and dump the DOM, and returns the probe's findings.
func loadPage(t *testing.T, chromium string, page plot.Page) findings {
	t.Helper()
	var b bytes.Buffer
	if err := page.Write(&b); err != nil {
		t.Fatal(err)
	}
	html, ok := strings.CutPrefix(b.String(), "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n")
	if !ok {
		t.Fatalf("the page does not start as expected: %.80q", b.String())
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "page.html")
	if err := os.WriteFile(file, []byte("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"+probeJS+html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--force-device-scale-factor=1", fmt.Sprintf("--window-size=%d,2000", windowWidth),
		"--user-data-dir="+filepath.Join(dir, "profile"), "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--virtual-time-budget=3000", "--dump-dom", "file://"+file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chromium did not finish in %v\n%s", time.Since(start).Round(time.Millisecond), stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	dom := stdout.String()
	const open = `<script type="application/json" id="browser-findings">`
	i := strings.Index(dom, open)
	if i < 0 {
		t.Fatalf("chromium dumped no findings (%d bytes of DOM, %v); its stderr:\n%s", len(dom), time.Since(start).Round(time.Millisecond), stderr.Bytes())
	}
	rest := dom[i+len(open):]
	j := strings.Index(rest, "</script>")
	if j < 0 {
		t.Fatal("findings not closed")
	}
	var f findings
	if err := json.Unmarshal([]byte(rest[:j]), &f); err != nil {
		t.Fatalf("findings %q: %v", rest[:j], err)
	}
	t.Logf("loaded in %v at %d px", time.Since(start).Round(10*time.Millisecond), f.Width)
	return f
}

func checkFindings(t *testing.T, f findings, ids []string) {
	t.Helper()
	for _, e := range f.Errors {
		t.Errorf("page error: %s", e)
	}
	if f.Width != windowWidth {
		t.Errorf("the page is %d px wide, want the window's %d", f.Width, windowWidth)
	}
	if f.ScrollWidth > f.Width {
		t.Errorf("the page scrolls sideways: %d px wide in %d", f.ScrollWidth, f.Width)
	}
	have := map[string]bool{}
	for _, c := range f.Charts {
		have[c.ID] = true
		var errs []error
		if !c.JS || c.Canvas == nil || c.Canvas[0] < 400 || c.Canvas[1] < 200 {
			errs = append(errs, fmt.Errorf("not drawn by page.js (drawn by it %v, canvas %v px)", c.JS, c.Canvas))
		}
		if c.Drawn != c.Series {
			errs = append(errs, fmt.Errorf("%d series drawn of %d with points", c.Drawn, c.Series))
		}
		if c.Bars > 0 {
			if c.Labels != c.Bars {
				errs = append(errs, fmt.Errorf("%d bars labelled of %d", c.Labels, c.Bars))
			}
		} else {
			if c.Swatches != c.Series {
				errs = append(errs, fmt.Errorf("%d legend swatches for %d series", c.Swatches, c.Series))
			}
			for _, v := range c.LegendValues {
				if strings.Contains(v, "—") || strings.HasSuffix(v, ": ") {
					errs = append(errs, fmt.Errorf("legend entry without a value: %q", v))
				}
			}
			if len(c.HoverValues) != len(c.LegendValues) {
				errs = append(errs, fmt.Errorf("hovering the plot: legend %q", c.HoverValues))
			}
			for _, v := range c.HoverValues {
				if strings.Contains(v, "—") || strings.HasSuffix(v, ": ") || strings.Contains(v, "peak") {
					errs = append(errs, fmt.Errorf("hovering the plot, a legend entry without a value: %q", v))
				}
			}
		}
		for _, cut := range c.Cut {
			errs = append(errs, fmt.Errorf("cut off at %d px: %s", f.Width, cut))
		}
		if err := errors.Join(errs...); err != nil {
			t.Errorf("chart %s: %v", c.ID, err)
			continue
		}
		what := fmt.Sprintf("%d/%d series; legend %s; hovered %s", c.Drawn, c.Series, strings.Join(c.LegendValues, " · "), strings.Join(c.HoverValues, " · "))
		if c.Bars > 0 {
			what = fmt.Sprintf("%d/%d bars labelled", c.Labels, c.Bars)
		}
		t.Logf("%-17s %d×%d px at x %d–%d: %s", c.ID, c.Canvas[0], c.Canvas[1], c.Box[0], c.Box[1], what)
	}
	for _, id := range ids {
		if !have[id] {
			t.Errorf("no chart %s on the page", id)
		}
	}
}
