package engine

import (
	"bytes"
	"slices"
	"testing"

	"golang.org/x/net/http2"
)

// scanned is what frameScan reports of one frame.
type scanned struct {
	typ     http2.FrameType
	stream  uint32
	payload string // the kept first bytes
	block   bool   // it ends a header block
}

// scanFrames writes the client preface and a run of frames as
// x/net/http2's Framer writes them, and returns the bytes and the frames
// a frameScan must report.
func scanFrames() ([]byte, []scanned) {
	var b bytes.Buffer
	b.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&b, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 7})
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte("abc"), EndStream: true, EndHeaders: true})
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: []byte("de")})
	fr.WriteContinuation(3, true, []byte("fgh"))
	fr.WriteData(3, true, bytes.Repeat([]byte("x"), 300))
	fr.WriteRSTStream(5, http2.ErrCodeRefusedStream)
	fr.WriteGoAway(3, http2.ErrCodeNo, []byte("bye"))
	fr.WriteSettingsAck()
	return b.Bytes(), []scanned{
		{http2.FrameSettings, 0, "\x00\x03\x00\x00\x00\x07", false},
		{http2.FrameHeaders, 1, "abc", true},
		{http2.FrameHeaders, 3, "de", false},
		{http2.FrameContinuation, 3, "fgh", true},
		{http2.FrameData, 3, "xxxxxxxx", false},
		{http2.FrameRSTStream, 5, "\x00\x00\x00\x07", false},
		{http2.FrameGoAway, 0, "\x00\x00\x00\x03\x00\x00\x00\x00", false},
		{http2.FrameSettings, 0, "", false},
	}
}

// scanInPieces feeds b to a frameScan in pieces cut at cuts.
func scanInPieces(b []byte, cuts []int) []scanned {
	s := frameScan{preface: len(http2.ClientPreface)}
	var got []scanned
	feed := func(p []byte) {
		for len(p) > 0 {
			k, done := s.feed(p)
			p = p[k:]
			if done {
				got = append(got, scanned{s.typ(), s.stream(), string(s.payload()), s.endsHeaderBlock()})
			}
		}
	}
	at := 0
	for _, c := range cuts {
		if c > at && c < len(b) {
			feed(b[at:c])
			at = c
		}
	}
	feed(b[at:])
	return got
}

func TestFrameScan(t *testing.T) {
	b, want := scanFrames()
	every := make([]int, len(b))
	for i := range every {
		every[i] = i
	}
	for _, tc := range []struct {
		name string
		cuts []int
	}{{"whole", nil}, {"byte by byte", every}, {"in the preface and headers", []int{3, 24, 25, 32, 40, 41}}} {
		if got := scanInPieces(b, tc.cuts); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
	}
}

// FuzzFrameScan: however the bytes are cut, frameScan reports the same
// frames.
func FuzzFrameScan(f *testing.F) {
	f.Add([]byte{3, 24, 33, 200})
	f.Add([]byte{1, 1, 1, 1, 1})
	b, want := scanFrames()
	f.Fuzz(func(t *testing.T, steps []byte) {
		var cuts []int
		at := 0
		for _, s := range steps {
			at += int(s)
			cuts = append(cuts, at)
		}
		if got := scanInPieces(b, cuts); !slices.Equal(got, want) {
			t.Errorf("cut at %v:\n got %+v\nwant %+v", cuts, got, want)
		}
	})
}

// TestHeaderFragment: the loop's own HEADERS parsing strips padding and
// priority as RFC 9113 §6.2 lays them out, and names the connection error
// of a frame too short for what its flags say.
func TestHeaderFragment(t *testing.T) {
	block := []byte{0x82, 0x86}
	for _, c := range []struct {
		name  string
		flags http2.Flags
		p     []byte
		want  []byte
		code  http2.ErrCode
	}{
		{"plain", 0, block, block, 0},
		{"padded", http2.FlagHeadersPadded, append(append([]byte{3}, block...), 0, 0, 0), block, 0},
		{"priority", http2.FlagHeadersPriority, append([]byte{0, 0, 0, 1, 16}, block...), block, 0},
		{"both", http2.FlagHeadersPadded | http2.FlagHeadersPriority, append(append([]byte{1, 0, 0, 0, 1, 16}, block...), 0), block, 0},
		{"pad longer than the frame", http2.FlagHeadersPadded, []byte{9, 1}, nil, http2.ErrCodeProtocol},
		{"priority cut short", http2.FlagHeadersPriority, []byte{0, 0, 1}, nil, http2.ErrCodeFrameSize},
	} {
		frag, code, ok := headerFragment(c.flags, c.p)
		if ok != (c.want != nil) || code != c.code || !bytes.Equal(frag, c.want) {
			t.Errorf("%s: got %x, %v, %v; want %x, %v", c.name, frag, code, ok, c.want, c.code)
		}
	}
	if _, ok := windowIncrement([]byte{0, 0, 1}); ok {
		t.Error("a 3-byte WINDOW_UPDATE parsed")
	}
	if inc, ok := windowIncrement([]byte{0x80, 0, 1, 0}); !ok || inc != 256 {
		t.Errorf("WINDOW_UPDATE with the reserved bit: %d, %v; want 256", inc, ok)
	}
}
