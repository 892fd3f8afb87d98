// Command target is the benchmark's loopback target and its small helpers
// (bench/run.sh). It is not part of openload.
//
//	target serve -addr 127.0.0.1:18080 [-stall-every 5s -stall-for 1s] [-grpc-addr 127.0.0.1:18084]
//	target count URL            print the requests served so far (GET URL/count)
//	target reset URL            start counting arrivals afresh (GET URL/arrivals/reset)
//	target lag URL RATE         how late the arrivals since the reset came against RATE/s (arrivals.go)
//	target json FILE PATH       print a value of a JSON file (PATH a.b.0.c)
//	target seconds FILE         openload result: the worst per-second |sent − scheduled| ÷ scheduled over the full seconds
//	target pauses [-d 5s]       how much time a thread spinning on each core loses to the machine (pauses.go)
//	target wakes [-every 500µs] what one sleep and wake on a timerfd costs in CPU (wakes_linux.go)
//
// serve answers every request but /count and /arrivals with 200 "ok",
// and counts when each arrives (arrivals.go). With -stall-every,
// it stalls globally: from the first request on, every stall-every it holds
// every request that arrives or is being served for stall-for, like a
// server-wide GC pause. With -grpc-addr it also answers target.proto's
// gRPC method there (grpc.go), its calls counted with the requests.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: target serve|count|reset|lag|json|seconds|pauses|wakes ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "count":
		err = count(os.Args[2:])
	case "reset":
		err = reset(os.Args[2:])
	case "lag":
		err = lag(os.Args[2:])
	case "json":
		err = jsonField(os.Args[2:])
	case "seconds":
		err = seconds(os.Args[2:])
	case "pauses":
		err = pauses(os.Args[2:])
	case "wakes":
		err = wakes(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(1)
	}
}

type server struct {
	served     atomic.Int64
	every, dur time.Duration
	once       sync.Once
	start      time.Time
	arr        arrivals
}

// stallLeft returns how long the stall in force at now lasts still.
func (s *server) stallLeft(now time.Time) time.Duration {
	if s.dur <= 0 || s.every <= 0 {
		return 0
	}
	s.once.Do(func() { s.start = now })
	in := now.Sub(s.start) % s.every
	if in >= s.every-s.dur {
		return s.every - in
	}
	return 0
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	switch r.URL.Path {
	case "/count":
		fmt.Fprintln(w, s.served.Load())
		return
	case "/arrivals":
		s.arr.write(w)
		return
	case "/arrivals/reset":
		s.arr.reset(now)
		return
	}
	s.arr.note(now)
	if d := s.stallLeft(now); d > 0 {
		time.Sleep(d)
	}
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok"))
	s.served.Add(1)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18080", "listen address (loopback)")
	s := &server{}
	fs.DurationVar(&s.every, "stall-every", 0, "stall period (0: never)")
	fs.DurationVar(&s.dur, "stall-for", 0, "stall length")
	gaddr := fs.String("grpc-addr", "", "also serve target.proto's gRPC method (h2c) at this address (loopback)")
	fs.Parse(args)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	done := make(chan error, 2) // the first server to fail ends serve
	if *gaddr != "" {
		gln, err := net.Listen("tcp", *gaddr)
		if err != nil {
			ln.Close()
			return err
		}
		go func() { done <- s.serveGRPC(gln) }()
	}
	// HTTP/1.1, and HTTP/2 with prior knowledge (h2c) on the same port,
	// for the HTTP/2 rows.
	srv := &http.Server{Handler: s, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go func() { done <- srv.Serve(ln) }()
	return <-done
}

func count(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("count URL")
	}
	b, err := control(args[0], "/count")
	if err == nil {
		_, err = os.Stdout.Write(b)
	}
	return err
}

// control GETs one of the target's own paths (/count, /arrivals,
// /arrivals/reset) from the target at base and returns the body.
func control(base, path string) ([]byte, error) {
	resp, err := http.Get(base + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return b, err
}

func load(file string) (any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

func jsonField(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("json FILE PATH")
	}
	v, err := load(args[0])
	if err != nil {
		return err
	}
	for _, k := range strings.Split(args[1], ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return fmt.Errorf("%s: bad index %q", args[1], k)
			}
			v = x[i]
		default:
			return fmt.Errorf("%s: no %q", args[1], k)
		}
	}
	switch x := v.(type) {
	case float64:
		fmt.Println(strconv.FormatFloat(x, 'f', -1, 64))
	default:
		fmt.Println(x)
	}
	return nil
}

// seconds prints the largest relative deviation of sends from the
// schedule over the full seconds of an openload result's timeline.
func seconds(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("seconds FILE")
	}
	v, err := load(args[0])
	if err != nil {
		return err
	}
	tl, _ := v.(map[string]any)["timeline"].([]any)
	worst := 0.0
	for _, s := range tl {
		m, _ := s.(map[string]any)
		sched, _ := m["scheduled"].(float64)
		sent, _ := m["sent"].(float64)
		if sched > 0 {
			worst = math.Max(worst, math.Abs(sent-sched)/sched)
		}
	}
	fmt.Printf("%.4f\n", worst)
	return nil
}
