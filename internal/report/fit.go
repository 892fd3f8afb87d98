package report

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// A report on a terminal keeps to TableWidth columns: a table too wide
// is printed as tables stacked, each led by the first column again
// (fitTables); a line of prose too wide is wrapped at spaces
// (lineWrapper), on a terminal only: a file or a pipe gets each line
// whole, for grep.

// TableWidth is the width a report's tables are kept to where they can
// be split: a terminal's, the width its lines are wrapped to.
const TableWidth = LineWidth

// cols is the width of s on a terminal: its runes, wide ones (CJK) two
// columns each, as tablewriter pads cells; East Asian ambiguous ones
// (·, ×, —) one, as a western terminal shows them.
func cols(s string) int { return twwidth.WidthWithOptions(s, twwidth.Options{}) }

// widest is the width in columns of the widest line of s.
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, cols(l))
	}
	return n
}

// fitTables writes rows under head as one table when it fits TableWidth
// columns; else as tables stacked, each with the first column again (a
// sweep's rate, a latency row's name): split before column cut (> 1: a
// sweep's latencies, then its outcomes), then wherever a part would
// still be too wide (a long run's seconds).
func fitTables(w io.Writer, align tw.Alignment, head []string, rows [][]string, cut int) error {
	render := func(w io.Writer, cols []int) error {
		a := make(tw.Alignment, len(cols))
		h := make([]string, len(cols))
		for j, c := range cols {
			a[j], h[j] = align[c], head[c]
		}
		t := newTable(w, a, h...)
		for _, r := range rows {
			cells := make([]string, len(cols))
			for j, c := range cols {
				cells[j] = r[c]
			}
			if err := t.Append(cells); err != nil {
				return err
			}
		}
		return t.Render()
	}
	fits := func(cols []int) (string, bool, error) {
		var b strings.Builder
		err := render(&b, cols)
		return b.String(), widest(b.String()) <= TableWidth, err
	}
	all := make([]int, len(head))
	for i := range all {
		all[i] = i
	}
	whole, ok, err := fits(all)
	if ok || err != nil || len(head) <= 2 {
		if err == nil {
			_, err = io.WriteString(w, whole)
		}
		return err
	}
	groups := [][]int{all}
	if cut > 1 && cut < len(head) {
		groups = [][]int{all[:cut], append([]int{0}, all[cut:]...)}
	}
	for _, g := range groups {
		// Columns in order while the table fits; the one that would
		// not starts the next, after the first column again.
		part := []int{0}
		for _, c := range g[1:] {
			if _, ok, err := fits(append(part[:len(part):len(part)], c)); err != nil {
				return err
			} else if !ok && len(part) > 1 {
				if err := render(w, part); err != nil {
					return err
				}
				part = []int{0}
			}
			part = append(part, c)
		}
		if err := render(w, part); err != nil {
			return err
		}
	}
	return nil
}

// LineWrapper wraps each line written through it that is wider than
// width at spaces, as a report's lines are on a terminal (TextWrapped,
// and cmd's other reports: a diff, the verdict). Its further lines are
// indented under the text after the line's label ("counts   ",
// "result: "), or as the line itself is, or, prose, by two. A table's
// lines (fitTables keeps them narrow) pass as they are: wrapped, a
// table would not read.
type LineWrapper struct {
	w     io.Writer
	width int
	buf   []byte
	err   error
}

// NewLineWrapper wraps what is written to w at width columns (LineWidth
// for a terminal); width 0 passes it as it is, as a file or pipe gets
// it. Flush writes what is left.
func NewLineWrapper(w io.Writer, width int) *LineWrapper { return &LineWrapper{w: w, width: width} }

func (lw *LineWrapper) Write(p []byte) (int, error) {
	if lw.width <= 0 {
		return lw.w.Write(p)
	}
	lw.buf = append(lw.buf, p...)
	for lw.err == nil {
		i := bytes.IndexByte(lw.buf, '\n')
		if i < 0 {
			break
		}
		lw.line(string(lw.buf[:i]))
		lw.buf = lw.buf[i+1:]
	}
	return len(p), lw.err
}

// Flush writes what is left after the last newline.
func (lw *LineWrapper) Flush() error {
	if len(lw.buf) > 0 && lw.err == nil {
		_, lw.err = lw.w.Write(lw.buf)
		lw.buf = nil
	}
	return lw.err
}

func (lw *LineWrapper) line(l string) {
	out := l
	if cols(l) > lw.width && !strings.ContainsAny(firstRune(l), "┌│├└") {
		indent, first := continuation(l)
		lines := wrap(l[len(first):], max(lw.width-indent, 40))
		lines[0] = first + lines[0]
		out = strings.Join(lines, "\n"+strings.Repeat(" ", indent))
	}
	_, lw.err = io.WriteString(lw.w, out+"\n")
}

func firstRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

// continuation is the indent of a long line's further lines and the
// part of it kept as it is before its text: a label (a word of letters
// padded with spaces to column 9, "counts   ", or a word and a colon to
// column 8 or 9, "result: ", "request: "; not "response = …"), else the
// line's own leading spaces, else none and an indent of 2.
func continuation(l string) (int, string) {
	if lead := len(l) - len(strings.TrimLeft(l, " ")); lead > 0 {
		return lead, l[:lead]
	}
	word := strings.TrimLeft(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	colon := strings.HasPrefix(word, ":")
	word = strings.TrimPrefix(word, ":")
	text := strings.TrimLeft(word, " ")
	at := len(l) - len(text)
	if len(word) == len(text) || text == "" || (at != 9 && !(colon && at == 8)) || !colon && strings.ContainsAny(firstRune(text), "=·") {
		return 2, ""
	}
	return at, l[:at]
}

// wrap breaks text into lines of at most width columns at spaces,
// keeping a run of spaces within a line ("0   ✓ every request"); a word
// longer than width has a line of its own.
func wrap(text string, width int) []string {
	text = strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(text))
	var lines []string
	line, gap := "", ""
	for _, word := range strings.Split(text, " ") {
		if word == "" {
			gap += " "
			continue
		}
		switch {
		case line == "":
			line = word
		case cols(line)+len(gap)+cols(word) <= width:
			line += gap + word
		default:
			lines = append(lines, line)
			line = word
		}
		gap = " "
	}
	return append(lines, line)
}
