package engine

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// gRPC calls (Config.GRPC): a call is an HTTP/2 stream (PROTOCOL-HTTP2.md
// in grpc/grpc): a POST to /pkg.Service/Method with content-type
// application/grpc, te: trailers and grpc-timeout, whose body is the
// request's length-prefixed messages, already framed by the caller
// (Config.Body or Bodies). The answer is a head (:status 200), DATA
// holding length-prefixed messages, and trailers with grpc-status; or,
// trailers-only, one head with grpc-status and END_STREAM.
//
// Outcomes, as HTTP's: an answer with a grpc-status is completed, its
// code counted by name (Record.GRPCStatus, result.GRPCKey) as a status
// is, whatever the code: RESOURCE_EXHAUSTED is an answer as 429 is, and
// the codes that refuse a call as 4xx does (result.GRPCClass) weigh in
// the target's verdict as 4xx does. An answer without a grpc-status
// (errGRPCNoStatus) and a message over the limit (errGRPCTooLarge) are
// failures of their own kinds. A head of another status than 200 is
// counted by that status, as any HTTP answer.
//
// Each message of the answer is one event of the record's stream figures
// (tokenAt), dated by the arrival of its last byte: time to the first
// message from the schedule and from the send, the gap between messages,
// messages per call (Record.Tokens); a unary call has one. The two
// clients that send HTTP/2, the event loop (h2read_linux.go) and
// net/http's transport (grpcBody), read them with one grpcReader.

// GRPCMaxMessage is the default limit of an answer's message: grpc-go's
// default receive limit.
const GRPCMaxMessage = 4 << 20

var (
	errGRPCNoStatus = errors.New("grpc: the answer ended without a grpc-status")
	errGRPCTooLarge = errors.New("grpc: a message of the answer is over the run's limit")
	errGRPCCut      = errors.New("grpc: the answer ended inside a message")
)

// grpcTimeout is d as a grpc-timeout value: at most 8 digits and a unit,
// in milliseconds when they are whole and fit (30s is 30000m), else in
// the coarsest unit that holds d exactly, else in the finest that fits,
// rounded up so that the server never gives up before openload does.
func grpcTimeout(d time.Duration) string {
	units := [...]struct {
		d    time.Duration
		unit string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}, {time.Hour, "H"}}
	if d%time.Millisecond == 0 && d/time.Millisecond < 1e8 {
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "m"
	}
	for k := len(units) - 1; k >= 0; k-- {
		if u := units[k]; d%u.d == 0 && d/u.d < 1e8 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.unit
		}
	}
	for _, u := range units {
		if v := (d + u.d - 1) / u.d; v < 1e8 {
			return strconv.FormatInt(int64(v), 10) + u.unit
		}
	}
	return "99999999H" // unreachable: a Duration is under 2,562,048 hours
}

// grpcCall returns cfg with its requests made gRPC calls: method POST,
// and the headers a call needs set on a copy of each target's (the
// caller's metadata kept), so that every HTTP/2 client sends them as it
// sends any header.
func (cfg Config) grpcCall() Config {
	set := func(h http.Header) http.Header {
		h = h.Clone()
		if h == nil {
			h = http.Header{}
		}
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "application/grpc")
		}
		h.Set("Te", "trailers")
		h.Set("Grpc-Timeout", grpcTimeout(cfg.Timeout))
		return h
	}
	cfg.Method, cfg.Header = http.MethodPost, set(cfg.Header)
	if len(cfg.Targets) > 0 {
		ts := make([]Target, len(cfg.Targets))
		for i, t := range cfg.Targets {
			t.Method, t.Header = http.MethodPost, set(t.Header)
			ts[i] = t
		}
		cfg.Targets = ts
	}
	return cfg
}

// grpcMax is the run's message limit.
func (cfg *Config) grpcMax() int64 {
	if cfg.GRPCMaxMessage > 0 {
		return cfg.GRPCMaxMessage
	}
	return GRPCMaxMessage
}

// grpcStatus is a grpc-status value's code, −1 when it is not a number.
func grpcStatus(v string) int {
	if len(v) == 0 || len(v) > 3 {
		return -1
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return -1
		}
		n = n*10 + int(v[i]-'0')
	}
	return n
}

// grpcMessage is a grpc-message value percent-decoded (the spec's
// Percent-Encoded: %XX of UTF-8 bytes); a % not followed by two hex
// digits stays as it is.
func grpcMessage(v string) []byte {
	b := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			if h, ok := unhex(v[i+1]); ok {
				if l, ok := unhex(v[i+2]); ok {
					b = append(b, h<<4|l)
					i += 2
					continue
				}
			}
		}
		b = append(b, v[i])
	}
	return b
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// keepGRPC keeps, as the run's refusal (refusal.go), a gRPC call of
// request seq answered (HTTP status) with a code that refuses it as a
// 4xx does (result.GRPCClass), its grpc-message decoded as the body: the
// server's own words, as a 4xx's body is. Other codes cost a switch.
func (k *refusals) keepGRPC(seq uint64, status, code int, msg string) {
	if result.GRPCClass(code) != result.GRPCRefusal {
		return
	}
	if n := k.first.Load(); n != 0 && seq >= n-1 {
		return
	}
	g := newGrab()
	g.add(grpcMessage(msg))
	k.keep(seq, status, g)
}

// grpcReader cuts an answer's DATA into its length-prefixed messages.
type grpcReader struct {
	hdr  [5]byte
	hn   int   // bytes of hdr read
	need int64 // bytes of the current message still to come
	in   bool  // inside a message's payload
}

func (gr *grpcReader) reset() { *gr = grpcReader{} }

// feed reads p, bytes that arrived at now: each message they complete is
// an event of r, handed to ts. It fails with errGRPCTooLarge at a message
// over max. more is called before a second message's event (the h2 loop
// leaves its beat then).
func (gr *grpcReader) feed(p []byte, now time.Duration, max int64, r *recorder.Record, ts *tokenSink) error {
	for len(p) > 0 {
		if !gr.in {
			k := copy(gr.hdr[gr.hn:], p)
			gr.hn += k
			p = p[k:]
			if gr.hn < 5 {
				return nil
			}
			gr.need = int64(gr.hdr[1])<<24 | int64(gr.hdr[2])<<16 | int64(gr.hdr[3])<<8 | int64(gr.hdr[4])
			if gr.need > max {
				return errGRPCTooLarge
			}
			gr.in, gr.hn = true, 0
		}
		k := min(int64(len(p)), gr.need)
		gr.need -= k
		p = p[k:]
		if gr.need == 0 {
			gr.in = false
			ts.add(tokenAt(r, now, true))
		}
	}
	return nil
}

// cut reports whether the answer stopped inside a message.
func (gr *grpcReader) cut() bool { return gr.in || gr.hn > 0 }

// grpcEnd completes r, a gRPC answer's record whose messages were read
// by gr, with its grpc-status (code, when has): the error its outcome
// takes, or nil.
func grpcEnd(gr *grpcReader, r *recorder.Record, has bool, code int) error {
	r.Tokens = r.Events
	switch {
	case gr.cut():
		return errGRPCCut
	case !has:
		return errGRPCNoStatus
	}
	r.GRPC, r.GRPCStatus = true, code
	return nil
}

// grpcBody reads a gRPC answer through net/http (Config.GRPC, status
// 200): its messages as the h2 loop reads them, then its trailers.
func (g *generator) grpcBody(resp *http.Response, r *recorder.Record, sh *shard) error {
	r.Streamed, r.GotFirstByte, r.FirstByte = true, true, g.since()
	sr := streamReaders.Get().(*streamReader) // stream.go's buffer and batch
	sr.ts.sh = sh
	defer func() {
		sr.ts.flush()
		sr.ts.sh = nil
		streamReaders.Put(sr)
	}()
	ts, buf := &sr.ts, sr.buf
	var gr grpcReader
	max := g.cfg.grpcMax()
	for {
		m, rerr := resp.Body.Read(buf)
		if m > 0 {
			if err := gr.feed(buf[:m], g.since(), max, r, ts); err != nil {
				resp.Body.Close()
				r.Tokens = r.Events
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			resp.Body.Close()
			r.Tokens = r.Events
			return rerr
		}
	}
	resp.Body.Close()
	// Trailers-only: net/http puts the head's grpc-status in Header.
	v, has := resp.Trailer["Grpc-Status"]
	if !has {
		v, has = resp.Header["Grpc-Status"]
	}
	code := -1
	if has && len(v) > 0 {
		code = grpcStatus(v[0])
	}
	err := grpcEnd(&gr, r, has, code)
	if err == nil {
		msg := resp.Trailer.Get("Grpc-Message")
		if _, ok := resp.Trailer["Grpc-Message"]; !ok {
			msg = resp.Header.Get("Grpc-Message")
		}
		g.refusals.keepGRPC(r.Seq, r.Status, code, msg)
	}
	return err
}
