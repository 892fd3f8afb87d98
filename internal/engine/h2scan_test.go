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
