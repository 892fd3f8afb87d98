package main

import (
	"fmt"
	"github.com/openload/openload/internal/report"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/openload/openload/internal/engine"
)

// isTerminal reports whether w is a terminal; live progress is shown only
// then (and never with --quiet), so logs and pipes get the report alone.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine renders one refresh of the live progress line. The rates
// are over the window since the previous refresh: requests whose sending
// began in it, and arrivals that came due in it, each divided by its
// length.
func progressLine(p engine.Progress, total time.Duration) string {
	sent, due := p.Rates()
	return fmt.Sprintf("%5.1fs/%s · sent %.0f/s (scheduled %.0f/s) · in flight %d · errors %d · response p99 %.1f ms · send delay p99 %.2f ms",
		p.Elapsed.Seconds(), total, sent, due, p.InFlight, p.Failed, p.ResponseP99, p.SendDelayP99)
}

// progressPrinter returns the engine's progress hook, rewriting one line of
// w in place, and a function that clears the line at the end.
func progressPrinter(w io.Writer, total time.Duration) (func(engine.Progress), func()) {
	show := func(p engine.Progress) { fmt.Fprintf(w, "\r\033[K%s", progressLine(p, total)) }
	clear := func() { fmt.Fprint(w, "\r\033[K") }
	return show, clear
}

// wrapWidth is the width a report's long reasons are wrapped to on w: a
// terminal's report.LineWidth, else 0 (a file or pipe gets each on one
// line, whole for grep).
func wrapWidth(w io.Writer) int {
	if isTerminal(w) {
		return report.LineWidth
	}
	return 0
}
