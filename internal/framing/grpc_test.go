package framing

import (
	"bytes"
	"errors"
	"testing"
)

// TestGRPCMessages: messages written by AppendGRPC are cut back whole,
// whatever the pieces the bytes arrive in; a cut short one waits.
func TestGRPCMessages(t *testing.T) {
	msgs := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte{7}, 300)}
	var wire []byte
	for _, m := range msgs {
		wire = AppendGRPC(wire, m)
	}
	if !bytes.Equal(wire[:GRPCPrefix], []byte{0, 0, 0, 0, 1}) {
		t.Fatalf("prefix % x", wire[:GRPCPrefix])
	}
	for step := 1; step <= len(wire); step++ {
		var buf []byte
		var got [][]byte
		for i := 0; i < len(wire); i += step {
			buf = append(buf, wire[i:min(i+step, len(wire))]...)
			for {
				msg, rest, ok, err := CutGRPC(buf, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, append([]byte{}, msg...))
				buf = rest
			}
		}
		if len(got) != len(msgs) || len(buf) != 0 {
			t.Fatalf("step %d: %d messages, %d bytes left", step, len(got), len(buf))
		}
		for i := range msgs {
			if !bytes.Equal(got[i], msgs[i]) {
				t.Errorf("step %d: message %d is % x", step, i, got[i])
			}
		}
	}
}

func TestGRPCRefused(t *testing.T) {
	if _, _, _, err := CutGRPC([]byte{1, 0, 0, 0, 0}, 0); !errors.Is(err, ErrGRPCCompressed) {
		t.Errorf("compressed: %v", err)
	}
	if _, _, _, err := CutGRPC([]byte{2, 0, 0, 0, 0}, 0); err == nil {
		t.Error("flags 2: no error")
	}
	// Over the limit: refused from the prefix, before the bytes come.
	if _, _, _, err := CutGRPC(AppendGRPC(nil, make([]byte, 11))[:GRPCPrefix], 10); err == nil {
		t.Error("over the limit: no error")
	}
	if _, _, ok, err := CutGRPC(AppendGRPC(nil, make([]byte, 10)), 10); !ok || err != nil {
		t.Errorf("at the limit: ok %v, %v", ok, err)
	}
}
