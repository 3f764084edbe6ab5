package loopback_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/provider/providertest"
	"github.com/urma-go/sdk/urma"
)

// TestConformance runs the provider conformance suite on loopback0, with
// the initiator on the device's first EID and the target on its second.
func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{Pair: func(t testing.TB) (*urma.Context, *urma.Context) {
		dev, err := urma.DeviceByName("loopback0")
		require.NoError(t, err)
		a, err := urma.Open(dev, 0, nil)
		require.NoError(t, err)
		b, err := urma.Open(dev, 1, nil)
		require.NoError(t, err)
		return a, b
	}})
}
