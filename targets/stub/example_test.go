package stub_test

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openload/openload/targets/stub"
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

func ExampleConfig_Validate() {
	cfg := stub.DefaultConfig()
	cfg.Workers = -3
	fmt.Println(cfg.Validate())
	cfg = stub.DefaultConfig()
	cfg.Policy = "lifo"
	fmt.Println(cfg.Validate())
	// Output:
	// --workers must be > 0, got -3
	// --policy "lifo" is unknown (known: none, bounded, admission)
}
