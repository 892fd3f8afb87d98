// Reads openload's histograms with HdrHistogram's JavaScript library
// (hdr-histogram-js), for cmd/openload/interop_test.go. Takes any sequence
// of these pairs of arguments:
//
//   node hdr.js [result RUN.json] [hlog RUN.hlog]
//
//   result RUN.json   every histogram of a JSON result
//   hlog RUN.hlog     every tag of an interval log, merged, and each tag's
//                     per-interval counts
//
// Prints, for each file, its name and one line per histogram, values in the
// file's unit (µs):
//
//   file PATH
//   histogram NAME COUNT MAX V50 V90 V95 V99 V99.9 V99.99
//   tag TAG COUNT MAX V50 V90 V95 V99 V99.9 V99.99
//   intervals TAG COUNT…
//
// NAME is a metric of "histograms" (response, service, send_delay,
// corrected) or "server_timing:" and a Server-Timing metric's name. The library's getValueAtPercentile(q) takes the value at
// rank ⌈q·n⌉, openload's (hdrhistogram-go's) at rank ⌊q·n + ½⌋. So that
// both read the same rank, VQ is the library's value at percentile
// 100·(r − ½)/n, where r is openload's rank for q: that names rank r in
// the library's definition whatever the floating-point rounding.
"use strict";

const fs = require("fs");
const hdr = require("hdr-histogram-js");

const quantiles = [50, 90, 95, 99, 99.9, 99.99];

function line(kind, name, h) {
  const n = h.totalCount;
  const vals = quantiles.map((q) => {
    if (n === 0) return 0;
    const r = Math.min(Math.max(Math.floor((q / 100) * n + 0.5), 1), n);
    return h.getValueAtPercentile((100 * (r - 0.5)) / n);
  });
  // maxValue is the largest value recorded or added: a decoded histogram
  // holds the top of its bucket, a sum of intervals the bottom. Like Java's
  // getMaxValue and hdrhistogram-go's Max, report the top of that bucket.
  const max = n === 0 ? 0 : h.highestEquivalentValue(h.maxValue);
  console.log([kind, name, n, max, ...vals].join(" "));
}

function result(file) {
  const res = JSON.parse(fs.readFileSync(file, "utf8"));
  for (const m of ["response", "service", "send_delay", "corrected"]) {
    const s = res.histograms[m];
    if (s) line("histogram", m, hdr.decodeFromCompressedBase64(s, 64));
  }
  for (const st of res.server_timing || []) {
    line("histogram", "server_timing:" + st.name, hdr.decodeFromCompressedBase64(st.histogram, 64));
  }
}

function hlog(file) {
  const reader = new hdr.HistogramLogReader(fs.readFileSync(file, "utf8"), 64);
  const total = new Map();
  const counts = new Map();
  let h;
  while ((h = reader.nextIntervalHistogram()) !== null) {
    if (!total.has(h.tag)) {
      total.set(h.tag, hdr.build({ bitBucketSize: 64 }));
      counts.set(h.tag, []);
    }
    total.get(h.tag).add(h);
    counts.get(h.tag).push(h.totalCount);
  }
  for (const [tag, t] of total) {
    line("tag", tag, t);
    console.log(["intervals", tag, ...counts.get(tag)].join(" "));
  }
}

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) usage();
for (let i = 0; i < args.length; i += 2) {
  console.log("file " + args[i + 1]);
  if (args[i] === "result") result(args[i + 1]);
  else if (args[i] === "hlog") hlog(args[i + 1]);
  else usage();
}

function usage() {
  console.error("usage: node hdr.js [result RUN.json] [hlog RUN.hlog]");
  process.exit(2);
}
