package urmanet_test

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/test/vm"
)

// TestMain runs the tests in a runtime directory of their own, so that the
// loopback contexts of other processes of the host are not resolved, and
// lets the test binary double as the peer process of the cross-process
// tests.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	if os.Getenv(relayEnv) != "" {
		os.Exit(relay())
	}
	if os.Getenv(holderEnv) != "" {
		os.Exit(holder())
	}
	dir, err := os.MkdirTemp(runtimeBase(), "urmanet-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv(loopback.EnvRuntimeDir, dir)
	code := leakcheck.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// runtimeBase is where the runtime directory goes: the default temporary
// directory, but in the test guest, whose temporary directory is the
// host's over 9p and refuses unix socket binds, /dev/shm.
func runtimeBase() string {
	if vm.Inside() {
		return "/dev/shm"
	}
	return ""
}
