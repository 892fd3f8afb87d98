package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// The gRPC cases of the clients' contract (grpc.go): every HTTP/2 path
// (the event loop and x/net's transport, h2c and TLS) against grpcServer,
// a raw gRPC server on net/http's HTTP/2 (x/net/http2's, bundled), which
// answers framed messages and trailers as PROTOCOL-HTTP2.md writes them
// and counts the calls it received: its count is the run's wire
// attempts.

// grpcServer answers every call by mode.
type grpcServer struct {
	mode  string
	calls atomic.Int64 // calls received
	msgs  atomic.Int64 // request messages received, whole
	bad   atomic.Int64 // calls without the request headers a call needs
}

// The known answers.
const (
	gDelay  = 50 * time.Millisecond  // a unary call's
	gStall  = 2 * time.Second        // the stall's, once
	gN      = 5                      // a server stream's messages
	gI      = 20 * time.Millisecond  // apart
	gLarge  = 2000                   // the oversized message, against a limit of
	gLimit  = 1000                   //
	gSpaced = 50 * time.Millisecond  // the calls' arrivals
	gOther  = 10 * time.Millisecond  // the stall case's other calls
	gCalls  = 6                      // per case
	gPrefix = "/openload.test.Echo/" // the method's service
	gSent   = 3                      // a streaming request's messages
)

// grpcFrame is payload as one length-prefixed message.
func grpcFrame(payload []byte) []byte {
	b := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
	copy(b[5:], payload)
	return b
}

// readMsgs reads the request's length-prefixed messages one by one,
// counting each whole one, and calls each with it.
func (s *grpcServer) readMsgs(r io.Reader, each func(msg []byte)) {
	var pre [5]byte
	for {
		if _, err := io.ReadFull(r, pre[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint32(pre[1:]))
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		s.msgs.Add(1)
		each(msg)
	}
}

func (s *grpcServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k := s.calls.Add(1)
	var sent int64
	switch s.mode {
	case "client": // client streaming: read them all, answer their count
		s.readMsgs(r.Body, func([]byte) { sent++ })
	case "bidi": // bidirectional: each message echoed as it is read
		w.Header().Set("Content-Type", "application/grpc")
		s.readMsgs(r.Body, func(m []byte) {
			_, _ = w.Write(grpcFrame(m))
			w.(http.Flusher).Flush()
		})
	default:
		s.readMsgs(r.Body, func([]byte) {})
	}
	_, _ = io.Copy(io.Discard, r.Body)
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/grpc" || r.Header.Get("Te") != "trailers" || r.Header.Get("Grpc-Timeout") != "5000m" || r.URL.Path != gPrefix+s.mode {
		s.bad.Add(1)
	}
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	msg := grpcFrame([]byte("answer"))
	status := func(code int) { h.Set(http.TrailerPrefix+"Grpc-Status", strconv.Itoa(code)) }
	switch s.mode {
	case "unary":
		time.Sleep(gDelay)
		_, _ = w.Write(msg)
		status(0)
	case "stall":
		if k == 1 {
			time.Sleep(gStall)
		} else {
			time.Sleep(gOther)
		}
		_, _ = w.Write(msg)
		status(0)
	case "stream":
		for i := range gN {
			if i > 0 {
				time.Sleep(gI)
			}
			_, _ = w.Write(msg)
			w.(http.Flusher).Flush()
		}
		status(0)
	case "exhausted": // every other call, trailers-only, as grpc-go answers an error
		if k%2 == 0 {
			h.Set("Grpc-Status", "8")
			h.Set("Grpc-Message", "quota%20exceeded")
			w.WriteHeader(http.StatusOK)
			return
		}
		_, _ = w.Write(msg)
		status(0)
	case "unimplemented": // trailers-only
		h.Set("Grpc-Status", "12")
		h.Set("Grpc-Message", "unknown method Unimplemented for service openload.test.Echo: 100%25 sure")
		w.WriteHeader(http.StatusOK)
	case "client":
		_, _ = w.Write(grpcFrame([]byte(strconv.FormatInt(sent, 10))))
		status(0)
	case "bidi":
		status(0)
	case "nostatus":
		_, _ = w.Write(msg)
	case "large":
		_, _ = w.Write(grpcFrame(make([]byte, gLarge)))
		status(0)
	}
}

// grpcCase is one gRPC row of the contract: check holds each record.
type grpcCase struct {
	mode  string
	conns int // 0: one per call
	check func(t reporter, p contractPath, r *recorder.Record)
	// counts, if set, are the run's result.GRPC.
	counts map[string]int64
	// refusal is the grpc-message the run keeps (Stats.Refusal), "" for
	// none.
	refusal string
	// sent is the messages a call sends (a streaming request: all in its
	// body, then END_STREAM); 0 for one.
	sent int
}

func grpcCases() []grpcCase {
	ok := func(t reporter, r *recorder.Record, events int) {
		if r.Outcome != recorder.Completed || r.Status != 200 || !r.GRPC || r.Events != events || r.Tokens != events || !r.Streamed {
			t.Errorf("seq %d: %v %v status %d grpc %v/%d events %d tokens %d streamed %v; want completed 200 grpc OK, %d messages",
				r.Seq, r.Outcome, r.Kind, r.Status, r.GRPC, r.GRPCStatus, r.Events, r.Tokens, r.Streamed, events)
		}
	}
	return []grpcCase{
		{mode: "unary", check: func(t reporter, p contractPath, r *recorder.Record) {
			ok(t, r, 1)
			if s := r.Service(); s < gDelay-cEarly || s > gDelay+cLoose {
				t.Errorf("seq %d: service %v, want the server's %v", r.Seq, s, gDelay)
			}
			if r.FirstToken-r.Sent < gDelay-cEarly || r.FirstToken > r.Done || r.FirstToken != r.LastToken {
				t.Errorf("seq %d: message at %v from the send, done %v: want one message after %v, by done", r.Seq, r.FirstToken-r.Sent, r.Done-r.Sent, gDelay)
			}
		}},
		// One connection, one stream: the calls due during the stall
		// wait for it in the generator, as their users would.
		{mode: "stall", conns: 1, check: func(t reporter, p contractPath, r *recorder.Record) {
			ok(t, r, 1)
			if r.Seq == 0 {
				if r.Service() < gStall-cEarly {
					t.Errorf("seq 0: service %v, want the stall's %v", r.Service(), gStall)
				}
				return
			}
			// In response time from the schedule, not in service time.
			if due := gStall - time.Duration(r.Seq)*gSpaced; r.Response() < due-cEarly || r.Service() >= gStall/2 {
				t.Errorf("seq %d: response %v service %v: want the stall in response (≥ %v), not in service", r.Seq, r.Response(), r.Service(), due)
			}
		}},
		{mode: "stream", check: func(t reporter, p contractPath, r *recorder.Record) {
			ok(t, r, gN)
			// A path that dates a message when its goroutine wakes may
			// date the first late, and the span shorter by as much.
			_, late := p.late()
			if !p.wakes {
				late = cEarly
			}
			if span := r.LastToken - r.FirstToken; span < (gN-1)*gI-late || span > (gN-1)*gI+cLoose {
				t.Errorf("seq %d: messages over %v, want %d × %v", r.Seq, span, gN-1, gI)
			}
			if r.FirstToken < r.Sent || r.FirstToken-r.Scheduled < r.FirstToken-r.Sent {
				t.Errorf("seq %d: first message at %v, sent %v", r.Seq, r.FirstToken, r.Sent)
			}
		}},
		{mode: "exhausted", check: func(t reporter, p contractPath, r *recorder.Record) {
			if r.Outcome != recorder.Completed || !r.GRPC || (r.GRPCStatus != 0 && r.GRPCStatus != 8) {
				t.Errorf("seq %d: %v grpc %v/%d, want completed OK or RESOURCE_EXHAUSTED", r.Seq, r.Outcome, r.GRPC, r.GRPCStatus)
			}
		}, counts: map[string]int64{"ok": gCalls / 2, "resource_exhausted": gCalls / 2}},
		{mode: "unimplemented", check: func(t reporter, p contractPath, r *recorder.Record) {
			if r.Outcome != recorder.Completed || !r.GRPC || r.GRPCStatus != 12 || r.Events != 0 || r.Status != 200 {
				t.Errorf("seq %d: %v status %d grpc %v/%d events %d, want a trailers-only UNIMPLEMENTED", r.Seq, r.Outcome, r.Status, r.GRPC, r.GRPCStatus, r.Events)
			}
		}, counts: map[string]int64{"unimplemented": gCalls}, refusal: "unknown method Unimplemented for service openload.test.Echo: 100% sure"},
		// Client and bidirectional streaming in ghz's form: the request's
		// messages framed into one body. The server reads each (its count
		// is held to calls × gSent), and a bidi call's echoes are a server
		// stream's messages.
		{mode: "client", sent: gSent, check: func(t reporter, p contractPath, r *recorder.Record) {
			ok(t, r, 1)
		}, counts: map[string]int64{"ok": gCalls}},
		{mode: "bidi", sent: gSent, check: func(t reporter, p contractPath, r *recorder.Record) {
			ok(t, r, gSent)
		}, counts: map[string]int64{"ok": gCalls}},
		{mode: "nostatus", check: func(t reporter, p contractPath, r *recorder.Record) {
			if r.Outcome != recorder.Failed || r.Kind != recorder.KindGRPCStatus || r.GRPC || r.Events != 1 {
				t.Errorf("seq %d: %v %v grpc %v events %d, want failed %v after one message", r.Seq, r.Outcome, r.Kind, r.GRPC, r.Events, recorder.KindGRPCStatus)
			}
		}},
		{mode: "large", check: func(t reporter, p contractPath, r *recorder.Record) {
			if r.Outcome != recorder.Failed || r.Kind != recorder.KindGRPCSize || r.GRPC {
				t.Errorf("seq %d: %v %v grpc %v, want failed %v", r.Seq, r.Outcome, r.Kind, r.GRPC, recorder.KindGRPCSize)
			}
		}},
	}
}

// contractGRPC holds the HTTP/2 paths to the gRPC cases: TestClientContract's
// subtest grpc (go test -run TestClientContract/grpc).
func contractGRPC(t *testing.T) {
	for _, c := range grpcCases() {
		t.Run(c.mode, func(t *testing.T) {
			var wg sync.WaitGroup
			for _, p := range contractPaths {
				if !p.h2() {
					continue
				}
				srv := &grpcServer{mode: c.mode}
				url, tc, _ := contractServer(t, p, srv)
				body := grpcFrame([]byte("ask"))
				for range c.sent - 1 {
					body = append(body, grpcFrame([]byte("ask"))...)
				}
				cfg := Config{Epoll: p.epoll, Protocol: p.proto, TLS: tc, GRPC: true, GRPCMaxMessage: gLimit,
					URL: mustURLString(url + gPrefix + c.mode), Body: body,
					Connections: c.conns, Timeout: 5 * time.Second, Drain: 10 * time.Second}
				if cfg.Connections == 0 {
					cfg.Connections = gCalls + 1
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					var f findings
					grpcRun(&f, p, c, cfg, srv)
					for _, e := range f {
						t.Errorf("%s: %s", p.name, e)
					}
				}()
			}
			wg.Wait()
		})
	}
}

// grpcRun runs case c on path p and holds it to the known answer.
func grpcRun(t reporter, p contractPath, c grpcCase, cfg Config, srv *grpcServer) {
	var mu sync.Mutex
	var recs []recorder.Record
	cfg.onRecord = func(r *recorder.Record) {
		mu.Lock()
		recs = append(recs, *r)
		mu.Unlock()
	}
	rec := recorder.New(nil)
	rec.StreamRun() // as a run of streamed answers: a gRPC run's messages are its events
	stats, err := Run(context.Background(), cfg, schedule.NewConstant(float64(time.Second)/float64(gSpaced), gCalls*gSpaced), rec)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if stats.Client != p.client || stats.Path != p.path {
		t.Errorf("client %q by %q, want %q by %q", stats.Client, stats.Path, p.client, p.path)
	}
	switch r := stats.Refusal; {
	case c.refusal == "" && r != nil:
		t.Errorf("a refusal kept: %+v", r)
	case c.refusal != "" && (r == nil || string(r.Body) != c.refusal || r.Seq != 0 || r.Status != 200):
		t.Errorf("refusal %+v, want the first call's grpc-message %q", r, c.refusal)
	}
	slices.SortFunc(recs, func(a, b recorder.Record) int { return int(a.Seq) - int(b.Seq) })
	if len(recs) != gCalls {
		t.Errorf("%d records, want %d", len(recs), gCalls)
	}
	var attempts int64
	for i := range recs {
		attempts += int64(recs[i].Attempts)
		c.check(t, p, &recs[i])
	}
	if n := srv.calls.Load(); n != attempts {
		t.Errorf("the server received %d calls, the run wrote %d attempts", n, attempts)
	}
	if sent := int64(max(c.sent, 1)); srv.msgs.Load() != attempts*sent {
		t.Errorf("the server read %d request messages, want %d calls × %d", srv.msgs.Load(), attempts, sent)
	}
	if n := srv.bad.Load(); n > 0 {
		t.Errorf("%d calls came without POST, content-type application/grpc, te: trailers, grpc-timeout 5000m or the method's path", n)
	}
	var res result.Result
	if err := rec.Fill(&res); err != nil {
		t.Errorf("fill: %v", err)
	}
	if c.counts != nil && fmt.Sprint(res.GRPC) != fmt.Sprint(c.counts) {
		t.Errorf("result grpc %v, want %v", res.GRPC, c.counts)
	}
	// The messages are the stream figures' events: messages per call
	// as output tokens, the gaps between them as ITL.
	var msgs int64
	for i := range recs {
		msgs += int64(recs[i].Tokens)
	}
	if st := res.Stream; st == nil || st.OutputTokens != msgs {
		t.Errorf("stream figures %+v, want %d output tokens (messages)", st, msgs)
	} else if c.mode == "stream" && (st.ITL.Count != gCalls*(gN-1) || !p.wakes && st.ITL.P50 < float64(gI-cEarly)/1e6) {
		t.Errorf("ITL %+v, want %d gaps of %v", st.ITL, gCalls*(gN-1), gI)
	}
	// scheduled ≤ sent ≤ first byte ≤ first message ≤ last ≤ done.
	if st := res.Stamps; st == nil || st.Checked != gCalls || st.Disordered != 0 {
		t.Errorf("stamps %+v, want %d checked in order", st, gCalls)
	}
}

// TestGRPCTimeout: grpc-timeout as PROTOCOL-HTTP2.md writes it, at most
// 8 digits and a unit, never shorter than the run's timeout.
func TestGRPCTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second:        "30000m",
		time.Millisecond:        "1m",
		1500 * time.Microsecond: "1500u",
		time.Nanosecond + 1e9:   "1000001u",
		48 * time.Hour:          "48H",
	} {
		if got := grpcTimeout(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestGRPCMessage: grpc-message's percent-encoding undone; a % without
// two hex digits kept.
func TestGRPCMessage(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"quota%20exceeded":   "quota exceeded",
		"%E2%9C%93 done%2":   "✓ done%2",
		"100%zz and %4a%4A%": "100%zz and JJ%",
	} {
		if got := string(grpcMessage(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
