package recorder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/result"
)

// LogHeader is the header line of the per-request CSV log. The first seven
// columns are fixed; times are milliseconds from the run's start with three
// decimals. sent_ms, service_ms and send_delay_ms are empty for a request
// that never left the generator; status is empty unless the request
// completed (a response whose body failed has its error only); error is
// empty for a completed request and otherwise one of refused, reset,
// timeout, tls, other, unfinished, stream; attempts, the last column, is the number
// of times the request was written to a connection (Record.Attempts: 1, plus
// the client's re-sends and the retries sent; 0 when none was written), so
// that the column's sum is what the server read.
//
// For a retried or re-sent request sent_ms is the first attempt's, done_ms,
// status and error the final attempt's, and service_ms the final attempt's
// service time, so that response_ms = send_delay_ms + the retry delay +
// service_ms (see Record).
//
// The first nine columns are those of logs written before the attempts
// column existed; LogReader reads both. A stream run's log
// (NewStreamLogWriter) appends StreamLogColumns after attempts, and a
// request mix's (Recorder.TrackTargets) appends LogTargetColumn last: the
// index of the request's target in the mix (0 is the first), in the
// order of the result's targets; a session run's (Recorder.TrackSessions)
// holds the step's index there. An index rather than the name: a name
// may hold commas, and an index costs no allocation and few bytes. A
// gRPC run's (Recorder.TrackGRPC) has LogGRPCColumn before the target
// column's place (after attempts, or after the stream columns).
const LogHeader = "seq,scheduled_ms,sent_ms,done_ms,service_ms,response_ms,send_delay_ms,status,error,attempts"

// LogTargetColumn is the last column of a request mix's log.
const LogTargetColumn = "target"

// LogGRPCColumn is a gRPC run's column: a completed call's grpc-status
// by its key in the result's grpc counts (result.GRPCKey: the spec's name
// in lower case, resource_exhausted), its number when the spec names no
// such code, "other" when it was not a number; empty for a request that
// did not complete with a grpc-status (the error column says why), so a
// failing share is traced to its calls.
const LogGRPCColumn = "grpc_status"

// LogWriter streams records as CSV lines. It buffers, so call Flush at the
// end; lines are written in the order records are added.
type LogWriter struct {
	w      *bufio.Writer
	buf    []byte
	err    error
	stream bool // the stream columns follow attempts
	target bool // the target column comes last (Recorder.TrackTargets, TrackSessions)
	grpc   bool // the grpc_status column comes before the target's (Recorder.TrackGRPC)
	headed bool // the header line is written
}

// NewLogWriter returns a writer. The header line is written with the
// first line, or by Flush, so that the recorder can add the columns of
// what it tracks (TrackTargets) until then.
func NewLogWriter(w io.Writer) *LogWriter {
	return &LogWriter{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 160)}
}

// NewStreamLogWriter is NewLogWriter for a run of streamed answers: each
// line also has StreamLogColumns (stream.go).
func NewStreamLogWriter(w io.Writer) *LogWriter {
	return &LogWriter{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 200), stream: true}
}

// head writes the header line once.
func (lw *LogWriter) head() {
	if lw.headed || lw.err != nil {
		return
	}
	lw.headed = true
	h := LogHeader
	if lw.stream {
		h += "," + StreamLogColumns
	}
	if lw.grpc {
		h += "," + LogGRPCColumn
	}
	if lw.target {
		h += "," + LogTargetColumn
	}
	_, lw.err = lw.w.WriteString(h + "\n")
}

// appendMillis appends d in milliseconds with three decimals (microsecond
// resolution, truncated).
func appendMillis(b []byte, d time.Duration) []byte {
	us := int64(d / time.Microsecond)
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return b
}

// Write appends one line. It does not allocate. After the first error it
// keeps returning that error.
func (lw *LogWriter) Write(r *Record) error {
	lw.head()
	if lw.err != nil {
		return lw.err
	}
	b := lw.buf[:0]
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, ',')
	b = appendMillis(b, r.Scheduled)
	b = append(b, ',')
	if r.WasSent {
		b = appendMillis(b, r.Sent)
	}
	b = append(b, ',')
	b = appendMillis(b, r.Done)
	b = append(b, ',')
	if r.WasSent {
		b = appendMillis(b, r.Service())
	}
	b = append(b, ',')
	b = appendMillis(b, r.Response())
	b = append(b, ',')
	if r.WasSent {
		b = appendMillis(b, r.SendDelay())
	}
	b = append(b, ',')
	if r.Status != 0 && r.Outcome == Completed {
		b = strconv.AppendInt(b, int64(r.Status), 10)
	}
	b = append(b, ',')
	b = append(b, r.Kind.String()...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Attempts), 10)
	if lw.stream {
		b = appendStream(b, r) // stream.go
	}
	if lw.grpc {
		b = append(b, ',')
		if r.GRPC && r.Outcome == Completed {
			b = appendGRPCStatus(b, r.GRPCStatus)
		}
	}
	if lw.target {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(r.Target), 10)
	}
	b = append(b, '\n')
	lw.buf = b
	// Flush before a line that would not fit, never in the middle of one:
	// the file then holds complete lines only, even if the process is
	// killed between two writes.
	if lw.w.Available() < len(b) {
		if lw.err = lw.w.Flush(); lw.err != nil {
			return lw.err
		}
	}
	_, lw.err = lw.w.Write(b)
	return lw.err
}

// appendGRPCStatus appends code as LogGRPCColumn holds it.
func appendGRPCStatus(b []byte, code int) []byte {
	if code >= result.GRPCCodes {
		return strconv.AppendInt(b, int64(code), 10)
	}
	return append(b, result.GRPCKey(code)...)
}

// parseGRPCStatus reads LogGRPCColumn's value; ok is false for one it
// never holds.
func parseGRPCStatus(v string) (code int, ok bool) {
	if v == result.GRPCOther {
		return -1, true
	}
	if c, ok := result.GRPCCode(v); ok {
		return c, true
	}
	c, err := strconv.ParseUint(v, 10, 16)
	return int(c), err == nil && c >= uint64(result.GRPCCodes)
}

// TrackGRPC adds LogGRPCColumn to the per-request log: each call's
// grpc-status. Call it before the first Add.
func (r *Recorder) TrackGRPC() {
	if r.log != nil {
		r.log.grpc = true
	}
}

// FlushLog flushes the per-request log, if there is one. Call it from the
// goroutine that adds records.
func (r *Recorder) FlushLog() error {
	if r.log == nil {
		return nil
	}
	return r.log.Flush()
}

// Flush writes buffered lines to the underlying writer.
func (lw *LogWriter) Flush() error {
	lw.head()
	if lw.err != nil {
		return lw.err
	}
	lw.err = lw.w.Flush()
	return lw.err
}

// LogEntry is one line of a per-request log as read back. Times keep the
// log's microsecond resolution.
type LogEntry struct {
	Seq       uint64
	Scheduled time.Duration
	Sent      time.Duration
	Done      time.Duration
	WasSent   bool
	Status    int
	Error     string
	// Attempts is the attempts column; in a log without it, 1 for a sent
	// request and 0 otherwise.
	Attempts int
	// The stream columns (StreamLogColumns), when the log has them
	// (Streamed); a time is -1 when its column was empty.
	Streamed                         bool
	FirstByte, FirstToken, LastToken time.Duration
	Tokens                           int
	PromptTokens, AskedTokens        int // 0 when not known, or in a log before them
	// Target is the target column (LogTargetColumn): the index of the
	// request's target in the run's mix, or its step in a session run;
	// -1 in a log without it.
	Target int
	// GRPC says the line's grpc_status column (LogGRPCColumn) held a
	// status, GRPCStatus its code (as Record's: −1 for "other").
	GRPC       bool
	GRPCStatus int
}

// LogReader reads a per-request CSV log, shaped like bufio.Scanner: call
// Scan until it returns false, then check Err. Errors name the line.
type LogReader struct {
	s      *bufio.Scanner
	name   string
	line   int
	target bool // the header ends with the target column
	grpc   bool // the header has the grpc_status column, before the target's
	cols   int  // the header's columns: every line has as many fields
	e      LogEntry
	err    error
}

// NewLogReader reads the log from r; name is used in error messages.
func NewLogReader(r io.Reader, name string) *LogReader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), 1<<20)
	return &LogReader{s: s, name: name}
}

func parseMillis(s string) (time.Duration, error) {
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" {
		return 0, errors.New("empty time")
	}
	ms, err := strconv.ParseInt(ip, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad time %q", s)
	}
	if ms > maxLogMillis || ms < -maxLogMillis {
		// Larger values would overflow time.Duration and read back wrong.
		return 0, fmt.Errorf("bad time %q: out of range", s)
	}
	if len(fp) > 3 {
		return 0, fmt.Errorf("bad time %q: more than 3 decimals", s)
	}
	for len(fp) < 3 {
		fp += "0"
	}
	us, err := strconv.ParseUint(fp, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("bad time %q", s)
	}
	d := time.Duration(ms)*time.Millisecond + time.Duration(us)*time.Microsecond
	if strings.HasPrefix(ip, "-") {
		d = time.Duration(ms)*time.Millisecond - time.Duration(us)*time.Microsecond
	}
	return d, nil
}

// Scan advances to the next record. It returns false at the end of the
// input or on the first error.
func (lr *LogReader) Scan() bool {
	if lr.err != nil {
		return false
	}
	for lr.s.Scan() {
		lr.line++
		text := lr.s.Text()
		if lr.line == 1 {
			if !strings.HasPrefix(text, "seq,scheduled_ms,sent_ms,done_ms,service_ms,response_ms,send_delay_ms") {
				lr.err = fmt.Errorf("%s:1: not an openload log: header %q", lr.name, text)
				return false
			}
			lr.target = strings.HasSuffix(text, ","+LogTargetColumn)
			lr.grpc = strings.HasSuffix(strings.TrimSuffix(text, ","+LogTargetColumn), ","+LogGRPCColumn)
			lr.cols = strings.Count(text, ",") + 1
			continue
		}
		if text == "" {
			continue
		}
		if err := lr.parse(text); err != nil {
			lr.err = fmt.Errorf("%s:%d: %v", lr.name, lr.line, err)
			return false
		}
		return true
	}
	if err := lr.s.Err(); err != nil {
		lr.err = fmt.Errorf("%s:%d: %v", lr.name, lr.line+1, err)
	} else if lr.line == 0 {
		lr.err = fmt.Errorf("%s: empty log", lr.name)
	}
	return false
}

// extra is how many columns the header named after attempts and the
// stream's: grpc_status, the target.
func (lr *LogReader) extra() int {
	n := 0
	for _, on := range []bool{lr.grpc, lr.target} {
		if on {
			n++
		}
	}
	return n
}

// trailing reads into e the columns the header named after attempts
// (and the stream columns), grpc_status then the target, and returns
// the fields before them: a line of such a log has 10, 14 or 16 fields
// before them, and parse's count rules then hold for those.
func (lr *LogReader) trailing(f []string, e *LogEntry) ([]string, error) {
	extra := lr.extra()
	if extra == 0 {
		return f, nil
	}
	if k := len(f) - extra; k != 10 && k != 14 && k != 16 {
		last := "the target"
		switch {
		case lr.grpc && lr.target:
			last = LogGRPCColumn + " and the target"
		case lr.grpc:
			last = LogGRPCColumn
		}
		return nil, fmt.Errorf("%d fields, want %d, %d or %d (the last %s)", len(f), 10+extra, 14+extra, 16+extra, last)
	}
	if lr.target {
		n, err := strconv.ParseUint(f[len(f)-1], 10, 16)
		if err != nil {
			return nil, fmt.Errorf("bad target %q", f[len(f)-1])
		}
		e.Target, f = int(n), f[:len(f)-1]
	}
	if lr.grpc {
		if v := f[len(f)-1]; v != "" {
			code, ok := parseGRPCStatus(v)
			if !ok {
				return nil, fmt.Errorf("bad %s %q", LogGRPCColumn, v)
			}
			e.GRPC, e.GRPCStatus = true, code
		}
		f = f[:len(f)-1]
	}
	return f, nil
}

func (lr *LogReader) parse(text string) error {
	e := LogEntry{Target: -1}
	f, err := lr.trailing(strings.Split(text, ","), &e)
	if err != nil {
		return err
	}
	if len(f) != 9 && len(f) != 10 && len(f) != 14 && len(f) != 16 {
		return fmt.Errorf("%d fields, want 9, 10, 14 or 16", len(f))
	}
	n := len(f) + lr.extra()
	if n > lr.cols {
		// A line is read by its own count (older logs' lines have fewer
		// columns), but not past the header: it would take columns the
		// header does not name (stream columns under a plain header),
		// and the log written again from it would drop them.
		return fmt.Errorf("%d fields, the header names %d", n, lr.cols)
	}
	if e.Seq, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return fmt.Errorf("bad seq %q", f[0])
	}
	if e.Scheduled, err = parseMillis(f[1]); err != nil {
		return fmt.Errorf("scheduled_ms: %v", err)
	}
	if f[2] != "" {
		e.WasSent = true
		if e.Sent, err = parseMillis(f[2]); err != nil {
			return fmt.Errorf("sent_ms: %v", err)
		}
	}
	if e.Done, err = parseMillis(f[3]); err != nil {
		return fmt.Errorf("done_ms: %v", err)
	}
	if f[7] != "" {
		if e.Status, err = strconv.Atoi(f[7]); err != nil {
			return fmt.Errorf("bad status %q", f[7])
		}
	}
	e.Error = f[8]
	if _, ok := ParseKind(e.Error); !ok {
		return fmt.Errorf("bad error %q (known: %s, or empty)", e.Error, strings.Join(kindNames[1:], ", "))
	}
	if e.WasSent {
		e.Attempts = 1
	}
	if len(f) >= 14 {
		if err := parseStream(f[10:], &e); err != nil { // stream.go
			return err
		}
	}
	if len(f) >= 10 {
		n, err := strconv.ParseUint(f[9], 10, 31)
		if err != nil {
			return fmt.Errorf("bad attempts %q", f[9])
		}
		e.Attempts = int(n)
		if !e.WasSent && n > 0 {
			return fmt.Errorf("attempts %d for a request never sent", n)
		}
	}
	lr.e = e
	return nil
}

// Entry returns the record read by the last successful Scan.
func (lr *LogReader) Entry() LogEntry { return lr.e }

// Err returns the first error met, if any.
func (lr *LogReader) Err() error { return lr.err }
