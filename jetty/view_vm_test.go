package jetty_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/urma-go/sdk/provider/ib"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestViewsVerbs runs the view cases through the ib provider on the
// guest's Soft-RoCE and soft-iWARP devices, where views take the software
// path (neither is an mlx5 device), with both contexts on the first EID.
func TestViewsVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			dev, err := urma.DeviceByName(d.Name)
			require.NoError(t, err)
			runViewSuite(t, func(t testing.TB) (*urma.Context, *urma.Context) {
				a, err := urma.Open(dev, 0, nil)
				require.NoError(t, err)
				b, err := urma.Open(dev, 0, nil)
				require.NoError(t, err)
				return a, b
			})
		})
	}
}
