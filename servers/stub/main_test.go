package stub

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package run if any goroutine (server, handler, client
// connection) is left over after all tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
