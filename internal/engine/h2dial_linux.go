//go:build linux

package engine

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

// The HTTP/2 loop's connections: dialling (in a goroutine, so that the
// loop never blocks on a handshake), the connections opened before the
// start, and a new connection's preface and SETTINGS. The loop itself is
// in h2loop_linux.go.

func (l *h2Loop) newConn() *h2lc {
	var c *h2lc
	if n := len(l.cfree); n > 0 {
		c = l.ctab[l.cfree[n-1]]
		l.cfree = l.cfree[:n-1]
	} else {
		c = &h2lc{idx: int32(len(l.ctab))}
		l.ctab = append(l.ctab, c)
	}
	c.state = connDial
	c.fd = -1
	return c
}

func (l *h2Loop) freeConn(c *h2lc) {
	idx := c.idx
	*c = h2lc{idx: idx, fd: -1}
	l.cfree = append(l.cfree, idx)
}

// startDial dials a connection for slot i's request.
func (l *h2Loop) startDial(i int32) {
	s := &l.slots[i]
	s.state = h2Wait
	c := l.newConn()
	l.dialing, l.dialFor = c, i
	l.out++
	deadline := l.g.start.Add(s.attempt + l.g.cfg.Timeout)
	idx := c.idx
	go func() {
		n := h2news{conn: idx, fd: -1}
		n.fd, n.tc, n.tio, n.err = l.dial(deadline)
		l.tell(n)
	}()
}

// dial opens a connection for the loop (h2Dial).
func (l *h2Loop) dial(deadline time.Time) (int, *tls.Conn, *loopTLS, error) {
	return h2Dial(&l.g.cfg, l.g.drain, l.addr, l.tlsConf, deadline)
}

// h2Dial opens a connection of a run of cfg to addr (TCP for h2c, TLS
// with ALPN h2 and tlsConf) and returns a duplicate of its descriptor; the
// runtime's poller forgets the original.
func h2Dial(cfg *Config, drain context.Context, addr string, tlsConf *tls.Config, deadline time.Time) (int, *tls.Conn, *loopTLS, error) {
	d := cfg.dialer()
	d.control = stampFromConnect // beat_linux.go
	nc, err := d.dialBy(drain, "tcp", addr, deadline)
	if err != nil {
		return -1, nil, nil, err
	}
	defer nc.Close()
	if cfg.Protocol != HTTP2 {
		fd, err := dupFD(nc)
		return fd, nil, nil, err
	}
	// The run's byte figures wait for a handshake under way, as for
	// net/http's dials (wireBytes.settle, bytes.go).
	if !cfg.bytes.dialStart() {
		return -1, nil, nil, errRunOver
	}
	defer cfg.bytes.dialEnd()
	conf := &tls.Config{}
	if tlsConf != nil {
		conf = tlsConf.Clone()
	}
	conf.NextProtos = []string{http2.NextProtoTLS}
	if conf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return -1, nil, nil, err
		}
		conf.ServerName = host
	}
	// The handshake's bytes, read and written here, are counted; the
	// loop's after it at its own reads and writes (bytes.go).
	tio := &loopTLS{Conn: countBytes(nc, cfg.bytes), direct: true}
	tc := tls.Client(tio, conf)
	ctx, cancel := context.WithDeadline(drain, deadline)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return -1, nil, nil, err
	}
	if got := tc.ConnectionState().NegotiatedProtocol; got != http2.NextProtoTLS {
		return -1, nil, nil, fmt.Errorf("engine: %s did not negotiate HTTP/2 with ALPN (got %q)", addr, got)
	}
	fd, err := dupFD(nc)
	if err != nil {
		return -1, nil, nil, err
	}
	tio.direct = false
	return fd, tc, tio, nil
}

// h2Addr is the host:port of u.
func h2Addr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// h2LoopApplies reports whether an open run of cfg goes on the HTTP/2
// event loop (newH2Loop).
func h2LoopApplies(cfg *Config) bool {
	return h2LoopFields(cfg) && cfg.URL != nil && cfg.URL.User == nil
}

// h2LoopFields reports whether cfg's fields other than its URL let an
// open run go on the HTTP/2 event loop.
func h2LoopFields(cfg *Config) bool {
	return cfg.Epoll && (cfg.Protocol == H2C || cfg.Protocol == HTTP2) && cfg.Transport == nil && !cfg.FollowRedirects &&
		!cfg.Retry.Enabled() && cfg.TargetStream == nil // the loop's requests are made before the start (newH2Reqs)
}

// predialH2 opens, before the clock starts (predial.go), the connections
// the first requests of an open run on the HTTP/2 loop would open:
// ⌈want ÷ the streams a connection takes before its server's SETTINGS
// (MaxStreams, else 100)⌉, one at a time, within predialBudget, stopping at
// the first failure. The loop adopts them (newH2Loop). It reports false
// when the run does not go on the loop.
func (g *generator) predialH2(want int) (Predial, bool) {
	if g.due == nil || !h2LoopApplies(&g.cfg) {
		return Predial{}, false
	}
	if want <= 0 {
		return Predial{}, true
	}
	per := h2InitStreams
	if m := g.cfg.MaxStreams; m > 0 {
		per = m
	}
	p := Predial{Wanted: (want + per - 1) / per}
	begun := time.Now()
	deadline := begun.Add(min(predialBudget, g.cfg.Timeout))
	addr, conf := h2Addr(g.cfg.URL), tlsConfig(g.cfg)
	for range p.Wanted {
		fd, tc, tio, err := h2Dial(&g.cfg, g.drain, addr, conf, deadline)
		if err != nil {
			p.Err = err
			break
		}
		g.h2warm = append(g.h2warm, h2news{fd: fd, tc: tc, tio: tio})
	}
	p.Opened, p.Took = len(g.h2warm), time.Since(begun)
	return p, true
}

// closeWarm closes what was opened before the start that no loop took:
// the HTTP/2 connections and the hold on stamping (holdEarly).
func closeWarm(g *generator) {
	for _, n := range g.h2warm {
		unix.Close(n.fd)
	}
	g.h2warm = nil
	if g.warmHold != nil {
		g.warmHold.Close()
		g.warmHold = nil
	}
}

// openConn makes a dialled connection one of the loop's and writes the
// client's preface.
func (l *h2Loop) openConn(c *h2lc, n h2news) error {
	c.fd = n.fd
	l.stampConn(n.fd)
	c.rx = -1
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, n.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: int32(n.fd)}); err != nil {
		c.fd = -1
		return err
	}
	c.state = connOpen
	c.tlsc, c.tio = n.tc, n.tio
	c.out = c.out[:0]
	if c.tlsc != nil {
		c.tio.out = &c.out
		c.frw = h2sink{&c.plain}
	} else {
		c.frw = h2sink{&c.out}
	}
	if c.rbuf == nil {
		c.rbuf = make([]byte, h2ReadBuf)
	}
	c.fr = http2.NewFramer(c.frw, c)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2MaxReadFrame)
	c.enc = hpack.NewEncoder(&c.hbuf)
	c.dec = hpack.NewDecoder(4096, c.field(l))
	c.ring = make([]int32, l.ringSize)
	for k := range c.ring {
		c.ring[k] = -1
	}
	c.nextID = 1
	c.limit = l.ringSize / 2
	if m := l.g.cfg.MaxStreams; m > 0 {
		c.limit = min(c.limit, m)
	}
	c.peerMax, c.peerWin, c.peerMaxF, c.sendWin = h2InitStreams, 65535, 16384, 65535
	c.cur = -1
	*c.frw.b = append(*c.frw.b, http2.ClientPreface...)
	c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
	)
	c.fr.WriteWindowUpdate(0, h2ConnWindow-65535)
	l.conns = append(l.conns, c)
	l.dirtyConn(c)
	return nil
}
