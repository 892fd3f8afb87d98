package engine

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/scripted"
)

// TestBytesSpareDial: a request of net/http's transport that finds no
// idle connection dials one, and takes a connection that comes free
// meanwhile; the dial goes on without it. Here the server accepts that
// second connection only once it has answered the last request, so that
// its TLS handshake is under way as the run ends. The bytes the run says
// it wrote and read must still be what the server read and wrote, within
// a close_notify a connection (checkBytes): the handshake's bytes are
// openload's, and none may come after the figures are taken (bytes.go).
func TestBytesSpareDial(t *testing.T) {
	var p contractPath
	for _, q := range contractPaths {
		if q.name == "h1-net-http-tls" {
			p = q
		}
	}
	// The first answer comes after HeadDelay: the second request, due
	// before it, finds the only connection busy and dials.
	c := contractCase{name: "spare dial", o: scripted.Options{Plain: 64, HeadDelay: 100 * time.Millisecond},
		reqs: 2, conns: 2, want: plainWant(0)}
	srv := scripted.New(c.format, c.o)
	answered := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	n := 0
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		mu.Lock()
		n++
		last := n == c.reqs
		mu.Unlock()
		if last {
			// A moment after the answer, so that the run's end is
			// likelier to come before the handshake than after it.
			time.AfterFunc(50*time.Millisecond, func() { once.Do(func() { close(answered) }) })
		}
	}))
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	judge := &wireJudge{Listener: &secondAfter{Listener: hs.Listener, gate: answered}, srv: hs}
	hs.Listener = judge
	hs.StartTLS()
	t.Cleanup(hs.Close)
	cfg := c.config(p, hs.URL, tlsTrusting(hs))
	run := runContract(cfg, schedule.NewConstant(50, 40*time.Millisecond)) // at 0 and 20 ms
	// The gate may still be shut if the answers did not come.
	once.Do(func() { close(answered) })
	run.wire = judge.final()
	if len(run.recs) != c.reqs || run.err != nil {
		t.Fatalf("%d records, want %d (%v)", len(run.recs), c.reqs, run.err)
	}
	if run.wire.conns != 2 {
		t.Fatalf("the server accepted %d connections, want 2: the second request did not dial", run.wire.conns)
	}
	c.checkBytes(t, p, &run)
}

// secondAfter is a listener that accepts its second connection only once
// gate is closed.
type secondAfter struct {
	net.Listener
	gate     <-chan struct{}
	accepted int
}

func (l *secondAfter) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if l.accepted++; l.accepted == 2 {
		<-l.gate
	}
	return nc, err
}

// TestTransportTLSAsNetHTTP: the handshake a run's transport makes in
// its own dial (transportTLS) fails as net/http's would: against a
// server that never answers the ClientHello, at TLSHandshakeTimeout, with
// net/http's error, of kind timeout.
func TestTransportTLSAsNetHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn // read nothing, answer nothing
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	const timeout = 50 * time.Millisecond
	get := func(tr *http.Transport) error {
		_, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + "/")
		return err
	}
	stock := NewTransport(1, timeout)
	ours := NewTransport(1, timeout)
	ours.DialTLSContext = dialer{timeout: timeout}.transportTLS(ours.DialContext, nil, ours.TLSHandshakeTimeout)
	want, got := get(stock), get(ours)
	if want == nil || got == nil || got.Error() != want.Error() || Kind(got) != Kind(want) || Kind(got) != recorder.KindTimeout {
		t.Errorf("error %v (kind %v), want net/http's %v (kind %v), of kind timeout", got, Kind(got), want, Kind(want))
	}
}
