package engine

import (
	"errors"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/retry"
)

// Validate refuses each bad value with a *field.Error naming its field (a
// retry policy's by its path), and accepts a configuration whose target
// is not known yet.
func TestConfigValidate(t *testing.T) {
	ok := Config{Connections: 4, Timeout: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatalf("no URL yet: %v", err)
	}
	if err := (Config{Connections: 4, Timeout: time.Second, DialTimeout: time.Second}).Validate(); err != nil {
		t.Errorf("a dial timeout equal to the timeout: %v", err)
	}
	httpsURL, _ := url.Parse("https://x/")
	for _, c := range []struct {
		set   func(*Config)
		field string
		want  string
	}{
		{func(c *Config) { c.Connections = 0 }, "Connections", "Connections must be between 1 and 100000, got 0"},
		{func(c *Config) { c.Connections = MaxConnections + 1 }, "Connections", "Connections must be between 1 and 100000, got 100001"},
		{func(c *Config) { c.Timeout = 0 }, "Timeout", "Timeout must be > 0, got 0s"},
		{func(c *Config) { c.DialTimeout = -time.Second }, "DialTimeout", "DialTimeout must be ≥ 0 (0: Timeout), got -1s"},
		{func(c *Config) { c.DialTimeout = 2 * time.Second }, "DialTimeout", "DialTimeout 2s is longer than Timeout 1s, which bounds a request's dial already"},
		{func(c *Config) { c.Drain = -time.Second }, "Drain", "Drain must be ≥ 0, got -1s"},
		{func(c *Config) { c.ClassHeaders = []string{"A", "B", "C", "D", "E"} }, "ClassHeaders", "ClassHeaders given 5 times, at most 4"},
		{func(c *Config) { c.ClassHeaders = []string{"X Y"} }, "ClassHeaders", `ClassHeaders "X Y" is not a valid header name`},
		{func(c *Config) { c.StampHeader = "X Y" }, "StampHeader", `StampHeader "X Y" is not a valid header name`},
		{func(c *Config) { c.Method = "GE T" }, "Method", `Method "GE T" is not a valid HTTP method`},
		{func(c *Config) { c.MaxStreams = -1 }, "MaxStreams", "MaxStreams must be ≥ 0, got -1"},
		{func(c *Config) { c.MaxBody = -5 }, "MaxBody", "MaxBody must be ≥ 0 bytes (0: no cap), got -5"},
		{func(c *Config) { c.GRPC = true }, "GRPC", "GRPC calls go over HTTP/2 only: set Protocol to h2 or h2c"},
		{func(c *Config) { c.Protocol, c.GRPC, c.GRPCMaxMessage = H2C, true, -1 }, "GRPCMaxMessage", "GRPCMaxMessage must be ≥ 0 bytes (0: 4194304), got -1"},
		{func(c *Config) { c.Protocol = "spdy" }, "Protocol", `Protocol "spdy" is unknown (known: http/1.1, h2, h2c)`},
		{func(c *Config) { c.Protocol, c.URL = H2C, httpsURL }, "Protocol", "Protocol is HTTP/2 without TLS (prior knowledge) and needs an http URL, got https://x/"},
		{func(c *Config) { c.Retry = retry.Policy{Retries: -1} }, "Retry.Retries", "Retry.Retries must be between 0 and 100, got -1"},
		{func(c *Config) {
			on, _ := retry.ParseOn("429")
			c.Retry = retry.Policy{On: on, Retries: 1, MinPerSec: math.NaN(), Window: time.Second}
		}, "Retry.MinPerSec", "Retry.MinPerSec must be a finite number ≥ 0, got NaN"},
	} {
		cfg := ok
		c.set(&cfg)
		err := cfg.Validate()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != c.field || err.Error() != c.want {
			t.Errorf("%s: %v (%T), want %s: %q", c.field, err, err, c.field, c.want)
		}
	}
}

func TestClosedValidate(t *testing.T) {
	ok := Closed{Users: 1, Duration: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  func(*Closed)
		want string
	}{
		{func(c *Closed) { c.Users = 0 }, "Users must be > 0, got 0"},
		{func(c *Closed) { c.Duration = 0 }, "Duration must be > 0, got 0s"},
		{func(c *Closed) { c.Rate = math.Inf(1) }, "Rate must be a finite number ≥ 0, got +Inf"},
		{func(c *Closed) { c.Think = -time.Second }, "Think must be ≥ 0, got -1s"},
	} {
		cl := ok
		c.set(&cl)
		if err := cl.Validate(); err == nil || err.Error() != c.want || !errors.As(err, new(*field.Error)) {
			t.Errorf("%+v: %v, want %s", cl, err, c.want)
		}
	}
}
