// Package result is what outlives a run: the versioned JSON result of one
// run (Result), and the sweep file of a sweep, a search or repeats (File,
// sweepfile.go). `report`, `diff` and `merge` read nothing else, so a
// saved file renders, compares and adds up as a live run does; the
// recorder fills a Result once at the end (its Fill) and is not needed
// after.
//
// # Sections
//
// A result is sections (counts, histograms, the timeline, a request mix's
// parts, streams, retries, the wire, stamps, warm-up, dwell, …), each a
// type in a file of its own with its own merge method, as
// hdrhistogram-go's Histogram owns its Merge: adding a section is one
// type and one method, not edits in every place that adds results up.
// Merge adds the results of the shards of one schedule (merge.go), Union
// the scenarios of one run (union.go); both sum counts, add histograms
// bucket by bucket (lossless at equal precision) and timelines second by
// second, and leave the checks and objectives for the caller to run again
// on the whole. What cannot be added is dropped rather than made up (a
// second's p99), and a merge refuses, naming the input, what is not a
// shard of the same run.
//
// # Reading and writing
//
// Write writes indented JSON; Read refuses another Version and tells a
// truncated, corrupt or foreign file apart, naming it. Older results
// still read: their histograms, once base64-encoded twice, come back in
// the standard form.
//
// # Histograms
//
// Histograms hold values in µs, from 1 µs to 1 hour at 3 significant
// digits (NewHistogram), stored as HdrHistogram's own V2 compressed
// base64 text, "HISTFAAAA…" (EncodeHistogram, DecodeHistogram). A format
// is only standard if an implementation not written here reads it:
// HdrHistogram's Java and JavaScript libraries read these strings, and
// the interval logs the recorder writes, as they are
// (cmd/openload/interop_test.go). ReadIntervalLog and MergeIntervalLogs
// read and add those logs (hlog.go).
package result
