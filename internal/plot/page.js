// openload's HTML report: draws each chart of #openload-data with uPlot in
// place of its static SVG, with the values under the cursor in the legend
// (each line's peak when the cursor is elsewhere), drag to zoom,
// double-click to zoom out, and a click on a legend entry to hide or show
// its line. Styles, markers, steps and shaded spans come from the data
// (internal/plot/plot.go); widths and dashes there are in points. Each
// legend entry shows its series' line as drawn: band, solid, dashed,
// dotted, with its marker. A bar chart is drawn at the same size, its bars
// labelled. If anything fails, the SVGs stay.
//
// Each figure drawn says so in data attributes, for the browser test
// (internal/plot/browser_test.go) and anyone checking a page: data-drawn,
// how many series uPlot drew a path for, and on a bar chart data-labels,
// how many bars it labelled.
(function () {
  "use strict";
  if (typeof uPlot === "undefined" || typeof ResizeObserver === "undefined") {
    return;
  }
  var PX = 4 / 3; // CSS pixels per point
  var SVGNS = "http://www.w3.org/2000/svg";
  var NINES = [1, 10, 100, 1e3, 1e4, 1e5, 1e6];
  var charts = JSON.parse(document.getElementById("openload-data").textContent);

  function rgba(hex, opacity) {
    var v = parseInt(hex.slice(1), 16);
    return "rgba(" + ((v >> 16) & 255) + "," + ((v >> 8) & 255) + "," + (v & 255) + "," + (opacity || 1) + ")";
  }

  // pct labels a point of the percentile axis x = 1/(1 − p/100), with
  // enough digits to tell the nines apart.
  function pct(x) {
    if (x == null) {
      return "";
    }
    if (x >= 1e6) {
      return "max";
    }
    var p = 100 * (1 - 1 / x);
    var digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(100 - p)) + 1));
    var label = p.toFixed(digits);
    if (label.indexOf(".") >= 0) {
      label = label.replace(/0+$/, "").replace(/\.$/, "");
    }
    return label + "%";
  }

  function num(v) {
    if (v == null) {
      return "—";
    }
    var a = Math.abs(v);
    if (a >= 1000 || Number.isInteger(v)) {
      return Math.round(v).toLocaleString("en");
    }
    return v.toFixed(a >= 10 ? 1 : 3);
  }

  // withUnit writes v in the chart's unit: "175.0 ms", "120/s", "32.2 %".
  function withUnit(c, v) {
    var u = c.unit || "";
    if (v == null) {
      return "no data";
    }
    return num(v) + (u === "" ? "" : u.charAt(0) === "/" ? u : " " + u);
  }

  // peak is a series' highest value, null for one without points.
  function peak(s) {
    var m = null;
    (s.y || []).forEach(function (v) {
      if (v != null && (m == null || v > m)) {
        m = v;
      }
    });
    return m;
  }

  // swatch is a legend entry's sample of its series: a short line of its
  // width, opacity and dashes (a wide pale one reads as the band it is),
  // with its marker in the middle.
  function swatch(s) {
    var w = 30, h = 14;
    var svg = document.createElementNS(SVGNS, "svg");
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("aria-hidden", "true");
    var line = document.createElementNS(SVGNS, "line");
    line.setAttribute("x1", 1);
    line.setAttribute("x2", w - 1);
    line.setAttribute("y1", h / 2);
    line.setAttribute("y2", h / 2);
    line.setAttribute("stroke", rgba(s.color, s.opacity));
    line.setAttribute("stroke-width", s.width * PX);
    if (s.dash) {
      line.setAttribute("stroke-dasharray", s.dash.map(function (d) { return d * PX; }).join(" "));
    }
    svg.appendChild(line);
    if (s.marker === "ring") {
      var ring = document.createElementNS(SVGNS, "circle");
      ring.setAttribute("cx", w / 2);
      ring.setAttribute("cy", h / 2);
      ring.setAttribute("r", 3.2 * PX);
      ring.setAttribute("fill", "#fff");
      ring.setAttribute("stroke", rgba(s.color, 1));
      ring.setAttribute("stroke-width", 1.5);
      svg.appendChild(ring);
    }
    return svg;
  }

  // pctSplits puts ticks on the nines in view, or on 1, 2 and 5 times the
  // powers of ten when zoomed in to less than two nines.
  function pctSplits(u, axis, min, max) {
    var inView = function (v) { return v >= min * 0.999 && v <= max * 1.001; };
    var major = NINES.filter(inView);
    if (major.length >= 3) {
      // Every other nine when there are fewer than 56 px for each label.
      var px = u.bbox.width / (window.devicePixelRatio || 1);
      if (major.length * 56 > px) {
        major = major.filter(function (v, i) { return i % 2 === 0 || i === major.length - 1; });
      }
      return major;
    }
    var out = [];
    for (var d = 1; d <= 1e6; d *= 10) {
      [1, 2, 5].forEach(function (m) {
        if (inView(m * d)) {
          out.push(m * d);
        }
      });
    }
    return out;
  }

  // table is one series as uPlot's [xs, ys]; a per-second series becomes
  // a step line, with null (a gap) after a run of seconds with data.
  function table(s) {
    var x = s.x || [], y = s.y || [];
    if (!s.step) {
      return [x, y];
    }
    var xs = [], ys = [];
    for (var i = 0; i < x.length; i++) {
      xs.push(x[i]);
      ys.push(y[i]);
      if (i + 1 < x.length && x[i + 1] - x[i] <= s.step) {
        continue;
      }
      if (i + 1 < x.length) {
        xs.push(x[i] + s.step);
        ys.push(null);
      } else {
        xs.push(s.end > x[i] ? s.end : x[i] + s.step);
        ys.push(y[i]);
      }
    }
    return [xs, ys];
  }

  function height(w) {
    return Math.round(Math.max(240, Math.min(460, w * 0.45)));
  }

  // shown is the value series si's line shows at the cursor's point idx.
  // uPlot.join leaves undefined where a series has no point of its own
  // (another series has one there): a step holds its last value, a line
  // runs straight between its neighbours (straight on the axis as drawn:
  // a log axis interpolates in log x). null is a gap: no value.
  function shown(u, si, idx, step, logX) {
    var xs = u.data[0], ys = u.data[si];
    if (ys[idx] !== undefined) {
      return ys[idx];
    }
    var l = idx - 1, r = idx + 1;
    while (l >= 0 && ys[l] === undefined) {
      l--;
    }
    while (r < ys.length && ys[r] === undefined) {
      r++;
    }
    if (l < 0 || ys[l] == null) {
      return null;
    }
    if (step) {
      return ys[l];
    }
    if (r >= ys.length || ys[r] == null) {
      return null;
    }
    var f = logX ? Math.log(xs[idx] / xs[l]) / Math.log(xs[r] / xs[l]) : (xs[idx] - xs[l]) / (xs[r] - xs[l]);
    return ys[l] + f * (ys[r] - ys[l]);
  }

  // drawnHook records on fig how many series uPlot drew a path for
  // (data-drawn): a series hidden from the legend, or without a point in
  // view, has none.
  function drawnHook(fig) {
    return function (u) {
      var n = 0;
      for (var i = 1; i < u.series.length; i++) {
        if (u.series[i].show && u.series[i]._paths) {
          n++;
        }
      }
      fig.dataset.drawn = String(n);
    };
  }

  // restyleLegend puts each series' swatch in place of uPlot's square
  // marker.
  function restyleLegend(u, c, live) {
    var rows = live.querySelectorAll(".u-legend .u-series");
    c.series.forEach(function (s, i) {
      var row = rows[i + 1];
      var marker = row && row.querySelector(".u-marker");
      if (!marker) {
        return;
      }
      marker.className = "u-marker swatch";
      marker.removeAttribute("style");
      marker.appendChild(swatch(s));
    });
  }

  function draw(c, fig) {
    var live = document.createElement("div");
    live.className = "live";
    fig.appendChild(live);
    var w = live.clientWidth;
    var u = c.bars && c.bars.length ? drawBars(c, fig, live, w) : drawLines(c, fig, live, w);
    new ResizeObserver(function () {
      if (live.clientWidth !== w && live.clientWidth > 0) {
        w = live.clientWidth;
        u.setSize({ width: w, height: height(w) });
      }
    }).observe(live);
    fig.classList.add("js");
  }

  function drawLines(c, fig, live, w) {
    var tables = c.series.map(table);
    var data = uPlot.join(tables);
    var peaks = c.series.map(peak);
    var series = [{
      label: c.x_label,
      value: function (u, v, si, idx) {
        if (idx == null) {
          return "each line's peak";
        }
        return v == null ? "" : c.log_x ? pct(v) : num(v);
      },
    }];
    c.series.forEach(function (s, k) {
      var ring = s.marker === "ring";
      series.push({
        label: s.name,
        stroke: rgba(s.color, s.opacity),
        width: s.width * PX,
        dash: s.dash ? s.dash.map(function (d) { return d * PX; }) : undefined,
        paths: s.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
        points: ring ? { show: true, size: 2 * 3.2 * PX, width: 1.5, stroke: rgba(s.color, 1), fill: "#fff" } : { show: false },
        value: function (u, v, si, idx) {
          if (idx == null) {
            return withUnit(c, peaks[k]);
          }
          v = shown(u, si, idx, !!s.step, c.log_x);
          return v == null ? "no data" : withUnit(c, v);
        },
      });
    });
    var spans = c.spans || [];
    var u = new uPlot({
      width: w,
      height: height(w),
      series: series,
      scales: {
        x: c.log_x ? { time: false, distr: 3, log: 10 } : { time: false },
        y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } },
      },
      axes: [
        c.log_x ? { label: c.x_label, splits: pctSplits, filter: function (u, v) { return v; }, values: function (u, v) { return v.map(pct); } } : { label: c.x_label },
        { label: c.y_label, size: 60, values: function (u, v) { return v.map(function (x) { return x.toLocaleString("en"); }); } },
      ],
      cursor: { drag: { x: true, y: false }, sync: { key: c.log_x ? "percentile" : "second" } },
      hooks: {
        drawClear: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = "rgba(128,128,128,0.16)";
          spans.forEach(function (sp) {
            var l = Math.max(u.valToPos(sp.from, "x", true), u.bbox.left);
            var r = Math.min(u.valToPos(sp.to, "x", true), u.bbox.left + u.bbox.width);
            if (r > l) {
              ctx.fillRect(l, u.bbox.top, r - l, u.bbox.height);
            }
          });
          ctx.restore();
        }],
        draw: [drawnHook(fig)],
      },
    }, data, live);
    restyleLegend(u, c, live);
    spans.forEach(function (sp) {
      var note = document.createElement("p");
      note.className = "span-note";
      note.appendChild(document.createElement("i"));
      var unit = sp.unit || " s";
      note.appendChild(document.createTextNode("shaded: " + sp.label + ", from " + sp.from.toFixed(1) + unit + " to " + sp.to.toFixed(1) + unit));
      live.appendChild(note);
    });
    return u;
  }

  // drawBars draws a bar chart (c.bars the bars' names, c.series[0] their
  // values and labels) as the static chart does: bars at 0 … n−1 on an
  // axis from −½ to n−½, each 60 % of its slot and at most 120 px wide, a
  // 0–100 axis, and each bar's label above it (inside its top, in white,
  // where it reaches the top), or only its share where the whole label is
  // wider than the slot, or none.
  function drawBars(c, fig, live, w) {
    var s = c.series[0];
    var n = c.bars.length;
    var xs = c.bars.map(function (b, i) { return i; });
    var labels = s.labels || [];
    var fill = rgba(s.color, 1);
    return new uPlot({
      width: w,
      height: height(w),
      legend: { show: false },
      series: [{ label: c.x_label }, {
        label: s.name,
        stroke: fill,
        fill: fill,
        width: 0,
        paths: uPlot.paths.bars({ size: [0.6, 120], align: 0 }),
        points: { show: false },
      }],
      scales: {
        x: { time: false, range: function () { return [-0.5, n - 0.5]; } },
        y: { range: function () { return [0, 100]; } },
      },
      axes: [
        { label: c.x_label, grid: { show: false }, ticks: { show: false },
          splits: function () { return xs; },
          values: function (u, v) { return v.map(function (i) { return c.bars[i] == null ? "" : c.bars[i]; }); } },
        { label: c.y_label, size: 60, values: function (u, v) { return v.map(function (x) { return x.toLocaleString("en"); }); } },
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false }, y: false },
      hooks: {
        draw: [drawnHook(fig), function (u) {
          var ctx = u.ctx, r = uPlot.pxRatio || 1;
          var slot = Math.abs(u.valToPos(1, "x", true) - u.valToPos(0, "x", true));
          var pad = 4 * r, done = 0;
          ctx.save();
          ctx.font = Math.round(13 * r) + "px system-ui, -apple-system, 'Segoe UI', Roboto, 'Liberation Sans', Arial, sans-serif";
          ctx.textAlign = "center";
          s.y.forEach(function (v, i) {
            var text = labels[i];
            if (text == null) {
              return;
            }
            if (ctx.measureText(text).width > slot - pad) {
              text = text.split(" (")[0];
            }
            if (ctx.measureText(text).width > slot - pad) {
              return;
            }
            var x = u.valToPos(i, "x", true), y = u.valToPos(Math.min(v, 100), "y", true);
            var h = 13 * r;
            if (y - pad - h < u.bbox.top) {
              ctx.fillStyle = "#fff";
              ctx.textBaseline = "top";
              ctx.fillText(text, x, y + pad);
            } else {
              ctx.fillStyle = "#222";
              ctx.textBaseline = "bottom";
              ctx.fillText(text, x, y - pad);
            }
            done++;
          });
          ctx.restore();
          fig.dataset.labels = String(done);
        }],
      },
    }, [xs, s.y], live);
  }

  var drawn = 0;
  charts.forEach(function (c) {
    var fig = document.getElementById(c.id);
    if (!fig || !c.series || !c.series.length) {
      return;
    }
    try {
      draw(c, fig);
      drawn++;
    } catch (e) {
      fig.classList.remove("js");
      var live = fig.querySelector(".live");
      if (live) {
        live.remove();
      }
    }
  });
  var section = document.querySelector(".charts");
  if (drawn && section) {
    var hint = document.createElement("p");
    hint.className = "hint";
    hint.textContent = "Hover for values; drag across a chart to zoom in, double-click to zoom out; click a legend entry to hide or show its line.";
    section.parentNode.insertBefore(hint, section);
  }
})();
