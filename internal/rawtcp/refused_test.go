//go:build unix

package rawtcp

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

func TestRefusedAddr(t *testing.T) {
	addr, release, err := RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("dial %s: connected, want refused", addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %s: %v, want connection refused", addr, err)
		}
	}
}
