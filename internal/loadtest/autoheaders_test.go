package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// runAuto runs 20 requests with the CLI's automatic headers against a
// server that answers every other request with header.
func runAuto(t *testing.T, header http.Header, o Options) *result.Result {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n++; n%2 == 0 {
			for k, v := range header {
				w.Header()[k] = v
			}
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	o.URL, _ = url.Parse(srv.URL)
	o.Schedule = schedule.Spec{Kind: schedule.Constant, Rate: 200, Duration: 100 * time.Millisecond}
	// One connection: the handler's count needs no lock.
	o.Connections, o.Timeout, o.Drain = 1, 5*time.Second, 5*time.Second
	o.Lean, o.Epoll = true, true
	o.AutoHeaders = DefaultAutoHeaders()
	res, _, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Completed != 20 {
		t.Fatalf("counts %+v", res.Counts)
	}
	return res
}

// classCounts is a result's tables as header → value → count, and the
// headers of those marked Auto.
func classCounts(res *result.Result) (map[string]map[string]int64, []string) {
	tables := map[string]map[string]int64{}
	var auto []string
	for _, ct := range res.Classes {
		tables[ct.Header] = ct.Counts()
		if ct.Auto {
			auto = append(auto, ct.Header)
		}
	}
	return tables, auto
}

// TestAutoHeaders: against a server that sends X-Stub-Source and
// Server-Timing, a run that asked for neither groups by the one and
// reports the other's metrics, says they were read unasked, and keeps the
// event loop; against one that sends neither, nothing is shown.
func TestAutoHeaders(t *testing.T) {
	stubLike := http.Header{"X-Stub-Source": {"fallback"}, "Server-Timing": {"queue;dur=1.5, total;dur=2"}}
	res := runAuto(t, stubLike, Options{})
	tables, auto := classCounts(res)
	if want := map[string]map[string]int64{"X-Stub-Source": {"fallback": 10, result.NoClass: 10}}; !reflect.DeepEqual(tables, want) ||
		!reflect.DeepEqual(auto, []string{"X-Stub-Source"}) {
		t.Errorf("tables %v (auto %v), want %v, auto", tables, auto, want)
	}
	if len(res.ServerTiming) != 2 || res.ServerTiming[0].Name != "queue" || res.ServerTiming[0].Percentiles.Count != 10 {
		t.Errorf("Server-Timing %+v: want queue and total, 10 each", res.ServerTiming)
	}
	c := res.Config
	if !reflect.DeepEqual(c.AutoHeaders, []string{"Server-Timing", "X-Stub-Source"}) || c.ServerTiming || c.ClassHeaders != nil || c.Client != engine.ClientEpoll {
		t.Errorf("config: auto %v, server timing %v, class headers %v, client %s", c.AutoHeaders, c.ServerTiming, c.ClassHeaders, c.Client)
	}

	res = runAuto(t, http.Header{"X-Other": {"a"}}, Options{})
	if len(res.Classes) != 0 || len(res.ServerTiming) != 0 {
		t.Errorf("a server that sends neither: classes %+v, Server-Timing %+v", res.Classes, res.ServerTiming)
	}
}

// TestAutoHeadersBesideAsked: headers asked for are not looked for again,
// and the automatic ones come after them.
func TestAutoHeadersBesideAsked(t *testing.T) {
	h := http.Header{"X-Stub-Source": {"model"}, "X-Stub-Reason": {"served"}, "Server-Timing": {"total;dur=2"}}
	res := runAuto(t, h, Options{Config: engine.Config{ClassHeaders: []string{"x-stub-source"}, ServerTiming: true}})
	if tables, auto := classCounts(res); len(tables) != 1 || auto != nil || res.Config.AutoHeaders != nil || len(res.ServerTiming) != 1 {
		t.Errorf("tables %v (auto %v), config auto %v, Server-Timing %+v", tables, auto, res.Config.AutoHeaders, res.ServerTiming)
	}
	res = runAuto(t, h, Options{Config: engine.Config{ClassHeaders: []string{"X-Stub-Reason"}}})
	tables, auto := classCounts(res)
	if len(tables) != 2 || tables["X-Stub-Reason"]["served"] != 10 || !reflect.DeepEqual(auto, []string{"X-Stub-Source"}) || res.Classes[0].Header != "X-Stub-Reason" {
		t.Errorf("tables %v (auto %v), want X-Stub-Reason then X-Stub-Source", tables, auto)
	}
}
