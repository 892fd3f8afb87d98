// Package demo holds what the runnable examples share: a run of openload
// against a fresh in-process stub, and the handling of an interrupt and a
// failure in main. Each example still says in its own code what it runs
// and prints.
package demo

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/servers/stub"
)

// AgainstStub starts a stub with cfg, aims o at its /predict (o's URL is
// set here), runs it and returns the result and the stub's own stats
// after the run. The stub is fresh for every call, so that each run has
// its own queue, counters and stall clock; it is closed on return.
func AgainstStub(ctx context.Context, cfg stub.Config, o loadtest.Options) (*result.Result, stub.Stats, error) {
	s, err := stub.NewServer(cfg)
	if err != nil {
		return nil, stub.Stats{}, err
	}
	defer s.Close()
	if o.URL, err = url.Parse(s.URL + "/predict"); err != nil {
		return nil, stub.Stats{}, err
	}
	res, _, err := loadtest.Run(ctx, o)
	if err != nil {
		return nil, stub.Stats{}, err
	}
	return res, s.Stats(), nil
}

// Main runs run with a context that an interrupt (Ctrl-C) cancels. When
// run fails it prints "name: error" on stderr and exits 1.
func Main(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// WriteResult writes res as a result file at path, as openload -o does.
func WriteResult(path string, res *result.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := result.Write(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
