package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/report"
)

// isTerminal reports whether w is a terminal; live progress is shown only
// then (and never with --quiet), so logs and pipes get the report alone.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine renders one refresh of the live progress line. The rates
// are over the window since the previous refresh: requests whose sending
// began in it, and arrivals that came due in it (scheduled), each divided
// by its length.
func progressLine(p engine.Progress, total time.Duration) string {
	sent, due := p.Rates()
	return fmt.Sprintf("%.1fs/%s · sent %.0f/s of %.0f/s · in flight %d · errors %d · p99 response %.1f ms, send delay %.2f ms",
		p.Elapsed.Seconds(), total, sent, due, p.InFlight, p.Failed, p.ResponseP99, p.SendDelayP99)
}

// progressPrinter returns the engine's progress hook, rewriting one line of
// w in place, and a function that clears the line at the end. The line is
// cut to the terminal's width (report.LineWidth when it says none): a
// line that wraps is not rewritten in place but repeated.
func progressPrinter(w io.Writer, total time.Duration) (func(engine.Progress), func()) {
	width := report.LineWidth
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 1 {
			width = cols
		}
	}
	show := func(p engine.Progress) {
		fmt.Fprintf(w, "\r\033[K%s", twwidth.Truncate(progressLine(p, total), width-1))
	}
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
