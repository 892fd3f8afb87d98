package stub_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/openload/openload/servers/stub"
)

// Start a stub on a free loopback port, like httptest.NewServer, and send
// it one request: an idle model answers it.
func Example() {
	cfg := stub.DefaultConfig()
	cfg.Latency = 5 * time.Millisecond
	srv, err := stub.NewServer(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/predict", "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	fmt.Println(resp.StatusCode, resp.Header.Get("X-Stub-Source"), resp.Header.Get("X-Stub-Reason"))
	st := srv.Stats()
	fmt.Println("model answers:", st.Sources.Model, "fallbacks:", st.Sources.Fallback)
	// Output:
	// 200 model served
	// model answers: 1 fallbacks: 0
}

// A deadline gate answering 204, as ad bidders do, with the arrival stamped
// upstream: a request stamped an hour ago is dropped, never served.
func Example_deadline() {
	cfg := stub.DefaultConfig()
	cfg.Latency = time.Millisecond
	cfg.Deadline, cfg.DeadlineStatus = 100*time.Millisecond, http.StatusNoContent
	cfg.ArrivalStamp = "header:X-Arrival-Ns"
	srv, err := stub.NewServer(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	req, err := http.NewRequest(http.MethodPost, srv.URL+"/predict", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Header.Set("X-Arrival-Ns", strconv.FormatInt(time.Now().Add(-time.Hour).UnixNano(), 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	fmt.Println(resp.StatusCode, resp.Header.Get("X-Stub-Reason"), resp.Header.Get("X-Stub-Drop"))
	st := srv.Stats()
	fmt.Println("sent:", st.Deadline.Sent, "dropped late:", st.Deadline.Dropped.Late)
	// Output:
	// 204 deadline late
	// sent: 0 dropped late: 1
}

func ExampleConfig_Validate() {
	cfg := stub.DefaultConfig()
	cfg.Workers = -3
	err := cfg.Validate()
	fmt.Println(err)
	// The error names the field, for a caller that calls it otherwise
	// (openload stub says --workers).
	var fe *stub.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Field, fe.Value)
	}
	cfg = stub.DefaultConfig()
	cfg.Policy = "lifo"
	fmt.Println(cfg.Validate())
	cfg = stub.DefaultConfig()
	cfg.LimitRPS, cfg.LimitShards = 3, 4
	fmt.Println(cfg.Validate())
	// Output:
	// Workers must be > 0, got -3
	// Workers -3
	// Policy "lifo" is unknown (known: none, bounded, admission)
	// LimitRPS 3 over LimitWindow 1s is below LimitShards 4: each shard would admit floor(3/s × 1s ÷ 4) = 0 requests per window
}
