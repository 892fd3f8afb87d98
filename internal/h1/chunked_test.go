package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http/httputil"
	"strings"
	"testing"
)

// dechunk feeds pieces to a Dechunk one after another, as reads bring
// them, and returns the payload, what followed the body when it ended,
// the Dechunk and its first error.
func dechunk(pieces [][]byte) (payload, after []byte, d Dechunk, err error) {
	for k, p := range pieces {
		for len(p) > 0 && !d.Done() {
			var data []byte
			if data, p, err = d.Feed(p); err != nil {
				return payload, nil, d, err
			}
			payload = append(payload, data...)
		}
		if d.Done() {
			after = append(after, p...)
			for _, q := range pieces[k+1:] {
				after = append(after, q...)
			}
			return payload, after, d, nil
		}
	}
	return payload, nil, d, nil
}

// split cuts b into pieces at points drawn from seed.
func split(b []byte, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out [][]byte
	for len(b) > 0 {
		n := 1 + rng.IntN(min(len(b), 1+rng.IntN(12)))
		out, b = append(out, b[:n]), b[n:]
	}
	return out
}

func TestDechunk(t *testing.T) {
	for _, c := range []struct {
		raw, payload, after string
		done, fails         bool
	}{
		{"3\r\nabc\r\n0\r\n\r\nNEXT", "abc", "NEXT", true, false},
		{"A;ext=\"x;y\"\r\n0123456789\r\n1 \t\r\nz\r\n0\r\nX-T: 1\r\n\r\n", "0123456789z", "", true, false},
		{"2\r\nab\r\n", "ab", "", false, false},     // not ended yet
		{"2\nab\r\n0\r\n\r\n", "", "", false, true}, // a bare LF
		{"2\r\nabX\n", "ab", "", false, true},       // no CRLF after the data
		{"zz\r\n", "", "", false, true},
		{" 2\r\nab\r\n0\r\n\r\n", "", "", false, true}, // net/http trims trailing blanks only
		{"\r\n", "", "", false, true},
		{"11112222333344445\r\n", "", "", false, true}, // over 16 digits
		{"2\r\na\rb\r\n", "a\rb"[:2], "", false, true},
		{strings.Repeat("0", 4095) + "\r\n", "", "", false, true},                                                   // a line over 4 KiB
		{strings.Repeat("1;"+strings.Repeat("e", 100)+"\r\nx\r\n", 200), strings.Repeat("x", 190), "", false, true}, // framing overhead past net/http's bound
	} {
		for seed := range uint64(4) {
			pieces := [][]byte{[]byte(c.raw)}
			if seed > 0 {
				pieces = split([]byte(c.raw), seed)
			}
			payload, after, d, err := dechunk(pieces)
			if string(payload) != c.payload || string(after) != c.after || d.Done() != c.done || (err != nil) != c.fails {
				t.Errorf("%.40q (seed %d): payload %q, after %q, done %v, err %v; want %q, %q, %v, fails %v",
					c.raw, seed, payload, after, d.Done(), err, c.payload, c.after, c.done, c.fails)
			}
			if err != nil && !errors.Is(err, ErrChunk) {
				t.Errorf("%.40q: %v, want ErrChunk", c.raw, err)
			}
		}
	}
}

// ChunkedReader reads what net/http's chunked reader reads, leaves its
// reader at the byte after the body's trailer, and fails on a body cut
// short.
func TestChunkedReader(t *testing.T) {
	raw := "5\r\nhello\r\n1;x\r\n \r\n" + strings.Repeat("1000\r\n"+strings.Repeat("y", 4096)+"\r\n", 3) + "0\r\nT: v\r\n\r\nHTTP/1.1 200 OK"
	for _, size := range []int{16, 64, 4096} {
		cr := &ChunkedReader{R: bufio.NewReaderSize(strings.NewReader(raw), size)}
		got, err := io.ReadAll(cr)
		want, _ := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(raw)))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: %d bytes, %v; want %d bytes", size, len(got), err, len(want))
		}
		if rest, _ := io.ReadAll(cr.R); string(rest) != "HTTP/1.1 200 OK" {
			t.Errorf("size %d: left %q", size, rest)
		}
		cut := &ChunkedReader{R: bufio.NewReaderSize(strings.NewReader(raw[:100]), size)}
		if _, err := io.ReadAll(cut); err != io.ErrUnexpectedEOF {
			t.Errorf("size %d, cut short: %v, want io.ErrUnexpectedEOF", size, err)
		}
	}
}

// FuzzDechunk: whatever the bytes and however they are split, Dechunk
// reads the payload it reads when fed them at once, and that is what
// net/http's chunked reader (httputil.NewChunkedReader) reads; the two
// fail, or reach the last chunk, on the same inputs.
func FuzzDechunk(f *testing.F) {
	f.Add([]byte("3\r\nabc\r\n0\r\n\r\n"), uint64(1))
	f.Add([]byte("a;ext=1\r\n0123456789\r\n1  \r\nz\r\n0\r\nX: y\r\n\r\nrest"), uint64(2))
	f.Add([]byte("2\nab\r\n0\r\n\r\n"), uint64(3))
	f.Add([]byte("1\r\nab\r\n"), uint64(4))
	f.Add([]byte("FFFFFFFFFFFFFFFF\r\nx"), uint64(5))
	f.Add([]byte("0\r\n"), uint64(6))
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		payload, after, d, err := dechunk([][]byte{raw})
		p2, a2, d2, err2 := dechunk(split(raw, seed))
		if !bytes.Equal(payload, p2) || !bytes.Equal(after, a2) || d.Done() != d2.Done() || (err == nil) != (err2 == nil) {
			t.Fatalf("%q: at once %q, %q, done %v, %v; in pieces %q, %q, done %v, %v", raw, payload, after, d.Done(), err, p2, a2, d2.Done(), err2)
		}
		want, werr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(raw)))
		reached := d.state >= dcTrailer // the last chunk came; what follows is the trailer
		if !bytes.Equal(payload, want) || (werr == nil) != reached {
			t.Fatalf("%q: Dechunk %q (last chunk read %v, %v), net/http %q (%v)", raw, payload, reached, err, want, werr)
		}
	})
}
