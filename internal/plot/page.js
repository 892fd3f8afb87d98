// openload's HTML report: draws each chart of #openload-data with uPlot in
// place of its static SVG, with the values under the cursor in the legend,
// drag to zoom, double-click to zoom out, and a click on a legend entry to
// hide or show its line. Styles, steps and shaded spans come from the data
// (internal/plot/plot.go); widths and dashes there are in points. Bar
// charts keep their SVG. If anything fails, the SVGs stay.
(function () {
  "use strict";
  if (typeof uPlot === "undefined" || typeof ResizeObserver === "undefined") {
    return;
  }
  var PX = 4 / 3; // CSS pixels per point
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

  function draw(c, fig) {
    var tables = c.series.map(table);
    var data = uPlot.join(tables);
    var series = [{
      label: c.x_label,
      value: function (u, v) { return v == null ? "—" : c.log_x ? pct(v) : num(v); },
    }];
    c.series.forEach(function (s) {
      series.push({
        label: s.name,
        stroke: rgba(s.color, s.opacity),
        width: s.width * PX,
        dash: s.dash ? s.dash.map(function (d) { return d * PX; }) : undefined,
        paths: s.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
        points: { show: false },
        value: function (u, v) { return num(v); },
      });
    });
    var spans = c.spans || [];
    var live = document.createElement("div");
    live.className = "live";
    fig.appendChild(live);
    var w = live.clientWidth;
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
      },
    }, data, live);
    spans.forEach(function (sp) {
      var note = document.createElement("p");
      note.className = "span-note";
      note.appendChild(document.createElement("i"));
      var unit = sp.unit || " s";
      note.appendChild(document.createTextNode("shaded: " + sp.label + ", from " + sp.from.toFixed(1) + unit + " to " + sp.to.toFixed(1) + unit));
      live.appendChild(note);
    });
    new ResizeObserver(function () {
      if (live.clientWidth !== w && live.clientWidth > 0) {
        w = live.clientWidth;
        u.setSize({ width: w, height: height(w) });
      }
    }).observe(live);
    fig.classList.add("js");
  }

  var drawn = 0;
  charts.forEach(function (c) {
    var fig = document.getElementById(c.id);
    if (!fig || (c.bars && c.bars.length) || !c.series || !c.series.length) {
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
