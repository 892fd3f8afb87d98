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
