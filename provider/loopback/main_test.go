package loopback_test

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider/providertest/remote"
)

// TestMain lets the test binary double as the peer process of the
// cross-process tests and benchmarks.
func TestMain(m *testing.M) {
	remote.MaybeServe()
	maybeBenchPeer()
	os.Exit(leakcheck.Main(m))
}
