package loopback_test

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as the peer process of the
// cross-process tests and benchmarks.
func TestMain(m *testing.M) {
	maybeBenchPeer()
	os.Exit(m.Run())
}
