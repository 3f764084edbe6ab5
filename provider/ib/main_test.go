package ib_test

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider/providertest/remote"
)

// TestMain lets the test binary serve as a remote peer (see package
// remote), which the two-host conformance test starts in the other
// network namespace.
func TestMain(m *testing.M) {
	remote.MaybeServe()
	os.Exit(leakcheck.Main(m))
}
