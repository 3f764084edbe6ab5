package ib_test

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider/providertest/remote"
	"github.com/urma-go/sdk/test/vm"
)

// TestMain lets the test binary serve as a remote peer (see package
// remote), which the two-host conformance test starts in the other
// network namespace. In the test guest it reports what the kernel is
// doing before a test timeout ends the run.
func TestMain(m *testing.M) {
	remote.MaybeServe()
	vm.WatchTimeout()
	os.Exit(leakcheck.Main(m))
}
