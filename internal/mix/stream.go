package mix

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/openload/openload/internal/engine"
)

// A Stream reads a targets file lazily, as vegeta's -lazy does: each
// target is read, built and handed to the run as soon as it is complete,
// so that a generator piped in starts the run at its first target
// instead of being read to its end first. It is the engine's
// TargetStream: request seq goes to the seq-th target read, each target
// sent once, so nothing is held but what is read ahead (streamAhead).
//
// A target is complete when the line after it shows it ended: in the
// HTTP format a blank line, the next METHOD line or its @body line (as
// vegeta's reader peeks at the next line), in JSON its own line. A
// generator ends each HTTP target with a blank line to have it sent at
// once.
//
// What a file read whole allows and a stream cannot: weights (a draw
// needs every target before the first request) are an error, and names
// are not checked for uniqueness (the run's records name no target, as
// the stream may be endless).
type Stream struct {
	first engine.Target
	ch    chan engine.Target
	err   error // why the stream ended; written before ch is closed
}

// streamAhead is how many built targets a Stream holds ahead of the
// run: a generator faster than the rate blocks on its pipe there, so
// memory stays bounded.
const streamAhead = 1024

// StreamOptions say how to read and build a Stream's targets: as
// ReadTargets reads a file (Options), and as BuildIn builds its targets
// (Values, Seed, Scope), with Header added to every target that does not
// set a header of its own of that name (AddHeader).
type StreamOptions struct {
	Options
	Values *Values
	Seed   uint64
	Scope  Scope
	Header http.Header
}

// ReadStream reads r's first target (a run's origin is its) and returns
// the Stream of every target of r, the first included, which goes on
// reading r as the run takes them. file names r in errors. An error
// before the first target is ReadStream's; one after it ends the Stream
// (Err), the targets before it sent.
func ReadStream(r io.Reader, file string, opt StreamOptions) (*Stream, error) {
	if opt.ReadFile == nil {
		opt.ReadFile = os.ReadFile
	}
	lr := &lineReader{br: bufio.NewReader(r), file: file, opt: opt}
	s := &Stream{ch: make(chan engine.Target, streamAhead)}
	first, err := lr.next()
	if err == io.EOF {
		if lr.empty {
			return nil, &Error{File: file, Msg: "empty: no targets"}
		}
		return nil, &Error{File: file, Msg: "no targets"}
	}
	if err != nil {
		return nil, err
	}
	s.first = first
	s.ch <- first
	go s.read(lr)
	return s, nil
}

// read sends the targets after the first until r ends or fails. It
// lives as long as the process when the run ends first: it waits on r,
// or on a run that no longer takes targets, as the CLI exits.
func (s *Stream) read(lr *lineReader) {
	defer close(s.ch)
	for {
		t, err := lr.next()
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			return
		}
		s.ch <- t
	}
}

// First is the stream's first target, the run's origin.
func (s *Stream) First() engine.Target { return s.first }

// Targets gives the targets in order (engine.TargetStream).
func (s *Stream) Targets() <-chan engine.Target { return s.ch }

// Err is why the stream ended: nil at the end of its file.
func (s *Stream) Err() error { return s.err }

// lineReader reads a targets file a line at a time and builds its
// targets as each is complete (Stream).
type lineReader struct {
	br     *bufio.Reader
	file   string
	opt    StreamOptions
	format Format
	line   int    // lines read
	empty  bool   // the file ended with no byte in it
	n      int    // targets built
	origin string // the first target's

	pending []string // lines of a target not known to be complete yet
	first   int      // the line number before pending's first
	ready   []Target // read, not built yet
	eof     bool
}

// next is the file's next target, built; io.EOF at its end.
func (lr *lineReader) next() (engine.Target, error) {
	for len(lr.ready) == 0 {
		if lr.eof {
			return engine.Target{}, io.EOF
		}
		if err := lr.readLine(); err != nil {
			return engine.Target{}, err
		}
	}
	t := &lr.ready[0]
	lr.ready = lr.ready[1:]
	if t.Name == "" {
		t.Name = t.Method + " " + redacted(t.URL)
	}
	if t.Weight != 0 {
		return engine.Target{}, t.fail("a weight, but targets read as the run sends are sent in turn: a draw by weight needs every target before the run; remove the weight, or have the file read before the run")
	}
	AddHeader(t, lr.opt.Header)
	e, err := buildAt(t, lr.n, lr.opt.Values, lr.opt.Seed, lr.opt.Scope, &lr.origin)
	if err != nil {
		return engine.Target{}, err
	}
	lr.n++
	return e, nil
}

// readLine reads one line, and moves to ready the targets it shows are
// complete.
func (lr *lineReader) readLine() error {
	raw, err := lr.br.ReadString('\n')
	if err != nil && err != io.EOF {
		return &Error{File: lr.file, Line: lr.line + 1, Msg: oneLine(err.Error())}
	}
	if err == io.EOF {
		lr.eof = true
		if raw == "" {
			lr.empty = lr.line == 0
			return lr.flush()
		}
	}
	if lr.line == 0 {
		raw = strings.TrimPrefix(raw, "\uFEFF") // as ReadTargets
	}
	lr.line++
	line := strings.TrimSuffix(raw, "\n")
	trimmed := strings.TrimSpace(line)
	if lr.format == Auto && trimmed != "" {
		lr.format = lr.opt.Format
		if lr.format == Auto {
			lr.format = HTTP
			if trimmed[0] == '{' {
				lr.format = JSON
			}
		}
	}
	switch {
	case lr.format == JSON:
		if trimmed != "" {
			ts, err := readJSON([]string{line}, lr.line-1, lr.file)
			if err != nil {
				return err
			}
			lr.ready = append(lr.ready, ts...)
		}
	case trimmed == "" || isMethodLine(trimmed) && lr.lastIsMethod():
		// What is pending ends here: a blank line ends a target, and a
		// METHOD line one that is only its METHOD line (readHTTP's peek
		// at the next line; after a header, it is read as a header).
		if err := lr.flushTarget(); err != nil {
			return err
		}
		if trimmed != "" || len(lr.pending) > 0 { // blank lines between targets are skipped
			lr.add(line)
		}
	default:
		lr.add(line)
		if trimmed[0] == '@' && lr.hasTarget() {
			// A body line ends its target (readHTTP).
			if err := lr.flushTarget(); err != nil {
				return err
			}
		}
	}
	if lr.eof {
		return lr.flush()
	}
	return nil
}

// add appends line to the pending lines.
func (lr *lineReader) add(line string) {
	if len(lr.pending) == 0 {
		lr.first = lr.line - 1
	}
	lr.pending = append(lr.pending, line)
}

// lastIsMethod reports whether the last pending line is a METHOD line.
func (lr *lineReader) lastIsMethod() bool {
	return len(lr.pending) > 0 && isMethodLine(strings.TrimSpace(lr.pending[len(lr.pending)-1]))
}

// hasTarget reports whether the pending lines begin a target: a line
// that is neither blank nor a comment (a directive waits for its
// target).
func (lr *lineReader) hasTarget() bool {
	for _, l := range lr.pending {
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			return true
		}
	}
	return false
}

// flushTarget reads the pending lines when they hold a target.
func (lr *lineReader) flushTarget() error {
	if !lr.hasTarget() {
		return nil
	}
	return lr.flush()
}

// flush reads the pending lines as HTTP targets (a directive with no
// target after it is readHTTP's error).
func (lr *lineReader) flush() error {
	if len(lr.pending) == 0 || lr.format == JSON {
		return nil
	}
	ts, err := readHTTP(lr.pending, lr.first, lr.file, lr.opt.Options)
	lr.pending = lr.pending[:0]
	if err != nil {
		return err
	}
	lr.ready = append(lr.ready, ts...)
	return nil
}

// AddHeader adds h's headers to t, each unless t sets a header of that
// name in any case, as vegeta's -header applies to every target of its
// file.
func AddHeader(t *Target, h http.Header) {
	for k, vs := range h {
		if t.Header == nil {
			t.Header = http.Header{}
		}
		if !hasHeader(t.Header, k) {
			t.Header[k] = vs
		}
	}
}

// hasHeader reports whether h has name, whatever its case (vegeta keeps
// a header's case as written).
func hasHeader(h http.Header, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

var _ engine.TargetStream = (*Stream)(nil)
