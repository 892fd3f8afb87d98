package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"
)

// Push: the exporter's registry, the one a scrape reads, sent to a
// Prometheus remote-write endpoint every interval and once at the end,
// so that a run nothing can scrape (a short one, one behind NAT) is seen
// whole. Like k6's experimental-prometheus-rw output (its push interval
// is 5 s by default): a WriteRequest in protobuf (remotewrite.go),
// snappy's block format, POSTed with the headers remote write 1.0 asks
// for.
//
// Every push carries every series' latest value: the counters are
// cumulative, so a push that fails loses nothing the next one does not
// carry, and the final push alone holds the result's figures. A failure
// is counted (PushStats), never retried and never stops the run.

// PushConfig is where and how to push.
type PushConfig struct {
	// URL is the remote-write endpoint, e.g.
	// http://prometheus:9090/api/v1/write.
	URL string
	// Header is added to every request (an Authorization, a tenant).
	Header http.Header
	// Labels are added to every series where it has no label of that
	// name: what a scrape's target labels would be (job, instance).
	Labels map[string]string
	// Client sends the requests; nil: a client of its own.
	Client *http.Client
	// Timeout bounds each periodic push (0: DefaultPushTimeout); the
	// final one is bounded by Stop's context. Pushes go one at a time:
	// the ticks a slow push misses are dropped, not queued.
	Timeout time.Duration
}

// DefaultPushTimeout is PushConfig.Timeout's default, Prometheus's own
// remote_write default remote_timeout (30 s) cut to what a run's
// interval can wait.
const DefaultPushTimeout = 10 * time.Second

// PushStats counts the pushes made.
type PushStats struct {
	Pushes int   // pushes tried, the final one included
	Failed int   // of them, the ones that did not land
	Err    error // the last failure's cause
}

// Pusher pushes an exporter's registry (StartPush).
type Pusher struct {
	e      *Exporter
	cfg    PushConfig
	cancel context.CancelFunc
	done   chan struct{}
	own    bool // cfg.Client is the pusher's: Stop closes its connections

	mu     sync.Mutex // one push at a time: samples of a series must go in time order
	stats  PushStats
	lastMs int64
}

// StartPush pushes e's registry every interval until Stop.
func (e *Exporter) StartPush(cfg PushConfig, interval time.Duration) *Pusher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultPushTimeout
	}
	own := cfg.Client == nil
	if own {
		cfg.Client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pusher{e: e, cfg: cfg, cancel: cancel, done: make(chan struct{}), own: own}
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			pctx, pcancel := context.WithTimeout(ctx, cfg.Timeout)
			err := p.push(pctx)
			pcancel()
			if ctx.Err() == nil { // one cut short by Stop is the final push's to make
				p.count(err)
			}
		}
	}()
	return p
}

// Stop ends the periodic pushes and makes the final one, within ctx: call
// it once every run's last snapshot is taken. It returns the stats of
// every push and the final push's error (nil: it landed).
func (p *Pusher) Stop(ctx context.Context) (PushStats, error) {
	p.cancel()
	<-p.done
	err := p.push(ctx)
	p.count(err)
	if p.own {
		p.cfg.Client.CloseIdleConnections()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats, err
}

func (p *Pusher) count(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Pushes++
	if err != nil {
		p.stats.Failed++
		p.stats.Err = err
	}
}

// push gathers the registry and sends it.
func (p *Pusher) push(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	mfs, gerr := p.e.gather() // what a scrape serves
	if gerr != nil && len(mfs) == 0 {
		return gerr
	}
	// Strictly later than the last push's: Prometheus refuses a second
	// sample of a series at the same millisecond, and one out of order.
	ms := max(time.Now().UnixMilli(), p.lastMs+1)
	p.lastMs = ms
	body := snappy.Encode(nil, writeRequest(mfs, p.cfg.Labels, ms))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range p.cfg.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", "openload")
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // the cause, without the method and URL the caller knows
		}
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, strings.Join(strings.Fields(string(msg)), " ")) // one line
	}
	return gerr // sent, but a collector failed: what it holds was not
}
