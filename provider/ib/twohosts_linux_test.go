//go:build cgo && urma_verbs

package ib_test

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider/providertest"
	"github.com/urma-go/sdk/provider/providertest/remote"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// envTwoHosts marks the copy of the test binary that runs in host A's
// network namespace.
const envTwoHosts = "URMA_IB_TWO_HOSTS"

// TestConformanceTwoHosts runs the conformance suite across the guest's
// veth wire: the initiator in network namespace A on rxe_a, the target in
// a peer process in namespace B on rxe_b, so every request, connection
// and import crosses the wire as between two machines. The test re-runs
// itself inside namespace A.
func TestConformanceTwoHosts(t *testing.T) {
	env := vm.Require(t)
	a, b := env.HostA, env.HostB
	if os.Getenv(envTwoHosts) == "" {
		args := []string{"-test.run=^TestConformanceTwoHosts$", "-test.timeout=20m"}
		if testing.Verbose() {
			args = append(args, "-test.v")
		}
		if f := flag.Lookup("test.count"); f != nil {
			args = append(args, "-test.count="+f.Value.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		cmd := a.Command(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), envTwoHosts+"=1")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		require.NoError(t, cmd.Run(), "the suite in namespace %s", a.Netns)
		return
	}
	peer, err := remote.StartIn("ip", "netns", "exec", b.Netns)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, peer.Close()) })
	dev, err := urma.DeviceByName(a.Name)
	require.NoError(t, err)
	providertest.Run(t, providertest.Harness{Timeout: 30 * time.Second,
		Pair: func(t testing.TB) (*urma.Context, *urma.Context) {
			ia, err := urma.Open(dev, 0, nil)
			require.NoError(t, err)
			ib, err := peer.Open(b.Name, 0)
			require.NoError(t, err)
			return ia, ib
		}})
}
