package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

func TestNewRequest(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/predict?x=1")
	r := NewRequest(http.MethodPost, u, http.Header{"X-Tenant": {"a"}, "Transfer-Encoding": {"chunked"}}, []byte("{}"), "x-arrival")
	want := "POST /predict?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 2\r\n" +
		"X-Tenant: a\r\nX-Arrival: 123\r\n\r\n{}"
	if got := string(r.Append(nil, []byte("123"))); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	r = NewRequest(http.MethodGet, u, http.Header{"Host": {"model.internal"}, "Connection": {" Close"}, "User-Agent": {"me"}}, nil, "")
	want = "GET /predict?x=1 HTTP/1.1\r\nHost: model.internal\r\nConnection: close\r\nUser-Agent: me\r\n\r\n"
	if got := string(r.Append(nil, nil)); got != want || !r.Close() {
		t.Errorf("got\n%q (close %v)\nwant\n%q", got, r.Close(), want)
	}
}

// roundTrip serialises a request with NewRequest and reads it back with
// http.ReadRequest, which must find what was asked for: the method, the
// target, the Host, the header (name: value, when name is not ""), the
// stamp header, Connection: close exactly when Close says so, and the
// body, with nothing after it. Inputs the CLI refuses (an invalid method,
// header or target) are skipped.
func roundTrip(t *testing.T, method, target, name, value string, body []byte, stamp string, digits uint64) {
	t.Helper()
	u, err := url.Parse("http://example.com" + target)
	if err != nil || u.User != nil || !httpguts.ValidHostHeader(u.Host) || !validMethod(method) || strings.ContainsAny(u.RequestURI(), " \t\r\n") {
		return
	}
	special := func(n string) bool {
		for _, s := range []string{"Host", "Connection", "Content-Length", "Transfer-Encoding", "User-Agent"} {
			if strings.EqualFold(n, s) {
				return true
			}
		}
		return false
	}
	header := http.Header{}
	if name != "" {
		if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value) {
			return
		}
		header[name] = []string{value}
	}
	var stampVal []byte
	if stamp != "" {
		// The CLI refuses a stamp header that -H sets too; a special
		// header makes no stamp.
		if !httpguts.ValidHeaderFieldName(stamp) || special(stamp) || strings.EqualFold(stamp, name) {
			return
		}
		stampVal = strconv.AppendUint(nil, digits, 10)
	}
	r := NewRequest(method, u, header, body, stamp)
	wire := r.Append(nil, stampVal)
	br := bufio.NewReader(bytes.NewReader(wire))
	req, err := http.ReadRequest(br)
	if err != nil {
		t.Fatalf("%q: ReadRequest: %v", wire, err)
	}
	got, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatalf("%q: body: %v", wire, err)
	}
	trimmed := strings.Trim(value, " \t")
	wantHost, wantUA := u.Host, "Go-http-client/1.1"
	switch {
	case strings.EqualFold(name, "Host"):
		wantHost = value
	case strings.EqualFold(name, "User-Agent"):
		wantUA = trimmed
	case name != "" && !special(name):
		if vs := req.Header.Values(name); len(vs) != 1 || vs[0] != trimmed {
			t.Errorf("%q: header %s %q, want [%q]", wire, name, vs, trimmed)
		}
	}
	if strings.EqualFold(name, "Connection") && strings.EqualFold(trimmed, "close") && !r.Close() {
		t.Errorf("%q: Connection %q, but Close is false", wire, value)
	}
	switch {
	case req.Method != method || req.RequestURI != u.RequestURI():
		t.Errorf("%q: read %s %s, want %s %s", wire, req.Method, req.RequestURI, method, u.RequestURI())
	case req.Host != strings.Trim(wantHost, " \t"):
		t.Errorf("%q: Host %q, want %q", wire, req.Host, wantHost)
	case req.UserAgent() != wantUA:
		t.Errorf("%q: User-Agent %q, want %q", wire, req.UserAgent(), wantUA)
	case req.Close != r.Close():
		t.Errorf("%q: read Close %v, Close() %v", wire, req.Close, r.Close())
	case stamp != "" && req.Header.Get(stamp) != string(stampVal):
		t.Errorf("%q: stamp %s %q, want %q", wire, stamp, req.Header.Get(stamp), stampVal)
	case req.ContentLength != int64(len(body)) || !bytes.Equal(got, body):
		t.Errorf("%q: body %q (length %d), want %q", wire, got, req.ContentLength, body)
	case br.Buffered() > 0:
		t.Errorf("%q: %d bytes after the request", wire, br.Buffered())
	}
}

func validMethod(m string) bool { return m != "" && httpguts.ValidHeaderFieldName(m) }

// FuzzRequest: what NewRequest writes, http.ReadRequest reads back as the
// request asked for.
func FuzzRequest(f *testing.F) {
	f.Add("GET", "/predict", "X-Tenant", "a", []byte(nil), "", uint64(0))
	f.Add("POST", "/p?q=1", "Content-Type", "application/json", []byte(`{"x":1}`), "X-Arrival", uint64(1764590000123456789))
	f.Add("PUT", "/", "Host", "model.internal:81", []byte(nil), "x-arrival", uint64(7))
	f.Add("GET", "/", "connection", " close ", []byte("b"), "", uint64(0))
	f.Add("DELETE", "/a%20b", "user-agent", "me/1.0", []byte(nil), "", uint64(0))
	f.Add("PATCH", "/", "Content-Length", "99", []byte(nil), "", uint64(0))
	f.Fuzz(func(t *testing.T, method, target, name, value string, body []byte, stamp string, digits uint64) {
		roundTrip(t, method, target, name, value, body, stamp, digits)
	})
}

// seqT is a test template: prefix, then seq in decimal.
type seqT string

func (t seqT) Append(dst []byte, seq uint64) []byte {
	return strconv.AppendUint(append(dst, t...), seq, 10)
}

// constT is a template that writes the same bytes for every request.
type constT string

func (t constT) Append(dst []byte, _ uint64) []byte { return append(dst, t...) }

// A templated request whose templates write constant bytes is the static
// request, byte for byte; when they vary, every request reads back with
// its own target, header value and body, and the right Content-Length.
func TestNewTemplated(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/predict?x=1")
	hdr := http.Header{"X-Tenant": {"a"}}
	static := NewRequest(http.MethodPost, u, hdr, []byte("{}"), "x-arrival")
	same := NewTemplated(http.MethodPost, u, http.Header{"X-Tenant": {"dropped"}}, nil, "x-arrival",
		Templates{Target: constT("/predict?x=1"), Headers: map[string]Template{"X-Tenant": constT("a")}, Body: constT("{}")})
	for seq := range uint64(3) {
		if got, want := string(same.AppendSeq(nil, seq, []byte("123"))), string(static.Append(nil, []byte("123"))); got != want {
			t.Errorf("constant templates:\n%q\nwant\n%q", got, want)
		}
	}
	if got, want := string(static.AppendSeq(nil, 9, nil)), string(static.Append(nil, nil)); got != want {
		t.Errorf("AppendSeq of a static request %q, want Append's %q", got, want)
	}
	r := NewTemplated(http.MethodPut, u, http.Header{"X-Static": {"s"}, "X-Id": {"replaced"}, "Connection": {"close"}}, nil, "",
		Templates{Target: seqT("/item/"), Headers: map[string]Template{"X-Id": seqT("id-"), "Host": seqT("no"), "X-Other": seqT("o")}, Body: seqT(`{"n":`)})
	if !r.Close() {
		t.Error("Connection: close lost")
	}
	var wb []byte
	for _, seq := range []uint64{0, 7, 12345, 1 << 40} {
		wb = r.AppendSeq(wb[:0], seq, nil)
		br := bufio.NewReader(bytes.NewReader(wb))
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("%q: %v", wb, err)
		}
		body, _ := io.ReadAll(req.Body)
		n := strconv.FormatUint(seq, 10)
		switch {
		case req.Method != http.MethodPut || req.RequestURI != "/item/"+n || req.Host != "127.0.0.1:8080":
			t.Errorf("%q: %s %s Host %s", wb, req.Method, req.RequestURI, req.Host)
		case req.Header.Get("X-Id") != "id-"+n || len(req.Header.Values("X-Id")) != 1 || req.Header.Get("X-Other") != "o"+n || req.Header.Get("X-Static") != "s":
			t.Errorf("%q: headers %v", wb, req.Header)
		case string(body) != `{"n":`+n || req.ContentLength != int64(len(body)) || br.Buffered() != 0:
			t.Errorf("%q: body %q, length %d, %d bytes after", wb, body, req.ContentLength, br.Buffered())
		}
	}
}

// AppendSeq allocates nothing once the buffer has room: it runs for
// every request of the lean clients.
func TestAppendSeqAllocsNone(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/")
	r := NewTemplated(http.MethodPost, u, http.Header{"X-A": {"b"}}, nil, "X-Arrival",
		Templates{Target: seqT("/p/"), Headers: map[string]Template{"X-Id": seqT("")}, Body: seqT("body ")})
	wb := make([]byte, 0, 4096)
	seq := uint64(0)
	if n := testing.AllocsPerRun(1000, func() {
		seq++
		wb = r.AppendSeq(wb[:0], seq, []byte("1764590000123456789"))
	}); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}

// FuzzTemplated: what NewTemplated writes with templates of the fuzzer's
// target, header value and body, http.ReadRequest reads back as
// NewRequest's request of those parts (roundTrip's checks).
func FuzzTemplated(f *testing.F) {
	f.Add("GET", "/predict", "X-Tenant", "a", []byte(nil), uint64(0))
	f.Add("POST", "/p?q=1", "Content-Type", "application/json", []byte(`{"x":1}`), uint64(1764590000123456789))
	f.Add("PUT", "/", "user-agent", "me/1.0", []byte("b"), uint64(7))
	f.Fuzz(func(t *testing.T, method, target, name, value string, body []byte, seq uint64) {
		if special(name) || name == "" || !httpguts.ValidHeaderFieldName(name) {
			return
		}
		u, err := url.Parse("http://example.com" + target)
		if err != nil || u.User != nil || !validMethod(method) || strings.ContainsAny(u.RequestURI(), " \t\r\n") || !httpguts.ValidHeaderFieldValue(value) {
			return
		}
		r := NewTemplated(method, u, nil, nil, "", Templates{Target: constT(u.RequestURI()),
			Headers: map[string]Template{name: constT(value)}, Body: constT(body)})
		wire := r.AppendSeq(nil, seq, nil)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(wire)))
		if err != nil {
			t.Fatalf("%q: ReadRequest: %v", wire, err)
		}
		got, _ := io.ReadAll(req.Body)
		trimmed := strings.Trim(value, " \t")
		if req.Method != method || req.RequestURI != u.RequestURI() || req.Header.Get(name) != trimmed ||
			req.ContentLength != int64(len(body)) || !bytes.Equal(got, body) {
			t.Errorf("%q: read %s %s %s=%q body %q", wire, req.Method, req.RequestURI, name, req.Header.Get(name), got)
		}
	})
}
