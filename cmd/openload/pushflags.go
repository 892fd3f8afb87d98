package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/metrics"
)

// pushOptions are the flags of pushing the live metrics by Prometheus
// remote write (metrics.Exporter.StartPush), named as k6's
// experimental-prometheus-rw options are: the endpoint, the push
// interval (k6's default, 5 s), headers for its authentication.
// It is comparable, as metricsOptions must be (--scenarios checks that
// no scenario has metrics flags of its own).
type pushOptions struct {
	url      string
	interval time.Duration
	headers  pushHeaders
}

// pushHeaders are the --metrics-push-header values given, each ended by
// a newline (which a header value cannot hold): a string, so that
// pushOptions stays comparable.
type pushHeaders string

func (h *pushHeaders) Set(s string) error {
	if strings.ContainsAny(s, "\r\n") {
		return errors.New("a header cannot hold a line break")
	}
	*h += pushHeaders(s + "\n")
	return nil
}

func (h *pushHeaders) String() string {
	return strings.ReplaceAll(strings.TrimSuffix(string(*h), "\n"), "\n", ", ")
}
func (h *pushHeaders) Type() string { return "stringArray" }

// parse reads them into a header, with --metrics-push-header's errors.
func (h pushHeaders) parse() (http.Header, error) {
	out := http.Header{}
	if h == "" {
		return out, nil
	}
	for _, s := range strings.Split(strings.TrimSuffix(string(h), "\n"), "\n") {
		if err := parseHeader(out, s); err != nil {
			// parseHeader is -H's: one parser, the flag's own name.
			return nil, fmt.Errorf("--metrics-push-header%s", strings.TrimPrefix(err.Error(), "-H"))
		}
	}
	return out, nil
}

const (
	defaultPushInterval = 5 * time.Second
	// minPushInterval: the figures change once a second (the recorder's
	// snapshot), so a shorter interval would resend the same ones.
	minPushInterval = time.Second
)

func (p *pushOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&p.url, "metrics-push", "", "push the live metrics by Prometheus remote write to `URL` (e.g. http://prometheus:9090/api/v1/write) every --metrics-push-interval, and once more after the result is written")
	fs.DurationVar(&p.interval, "metrics-push-interval", defaultPushInterval, "send the figures every `period` (≥ 1s: they change once a second)")
	fs.Var(&p.headers, "metrics-push-header", "add a `header` to every push, 'Name: value' (repeatable), e.g. 'Authorization: Bearer TOKEN'")
}

func (p *pushOptions) validate(fs *pflag.FlagSet) error {
	if p.url == "" {
		for _, name := range []string{"metrics-push-interval", "metrics-push-header"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies with --metrics-push only", name)
			}
		}
		return nil
	}
	if _, err := parseURL(p.url); err != nil {
		return fmt.Errorf("--metrics-push %v", err)
	}
	if p.interval < minPushInterval {
		return fmt.Errorf("--metrics-push-interval must be ≥ %v, got %v", minPushInterval, p.interval)
	}
	_, err := p.headers.parse()
	return err
}

// pushLabels are the labels a push adds to every series, standing for
// the target labels a scrape adds: job "openload", instance the host's
// name (a pod's name under Kubernetes, so that the shards of one run
// differ even without --shard).
func pushLabels() map[string]string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return map[string]string{"job": "openload", "instance": host}
}

// shown is the URL as stderr shows it: a password in it (basic
// authentication) as xxxxx.
func (p *pushOptions) shown() string {
	u, err := parseURL(p.url)
	if err != nil {
		return p.url
	}
	return u.Redacted()
}

// start pushes exp's registry from now on; nil without --metrics-push.
func (p *pushOptions) start(exp *metrics.Exporter, run string, quiet bool, stderr io.Writer) *metrics.Pusher {
	if p.url == "" {
		return nil
	}
	if !quiet {
		fmt.Fprintf(stderr, "openload: metrics pushed to %s every %v, run %q\n", p.shown(), p.interval, run)
	}
	h, _ := p.headers.parse() // validated
	return exp.StartPush(metrics.PushConfig{URL: p.url, Header: h, Labels: pushLabels()}, p.interval)
}

// stopPush makes the final push (within metrics.DefaultPushTimeout) and
// says on stderr whether it landed and how many pushes failed: always
// when one failed (-q included), else unless quiet. A push that failed
// never changes the run's exit code: its figures are in the result.
func stopPush(ps *metrics.Pusher, url string, quiet bool, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), metrics.DefaultPushTimeout)
	defer cancel()
	st, err := ps.Stop(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "openload: metrics push to %s: the final push did not land (%v); %d of %d pushes failed\n", url, err, st.Failed, st.Pushes)
	case st.Failed > 0:
		fmt.Fprintf(stderr, "openload: metrics push to %s: the final push landed; %d of %d pushes failed, the last: %v\n", url, st.Failed, st.Pushes, st.Err)
	case !quiet:
		fmt.Fprintf(stderr, "openload: metrics push to %s: %d pushes landed, the final one included\n", url, st.Pushes)
	}
}
