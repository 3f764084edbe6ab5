//go:build cgo && urma_verbs

package ib_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestPortCounters reads the guest's real sysfs: rxe keeps hw_counters
// (sent_pkts among them), siw keeps neither directory, and a port the
// device lacks is not found.
func TestPortCounters(t *testing.T) {
	env := vm.Require(t)
	rxe, err := urma.DeviceByName(env.RXE.Name)
	require.NoError(t, err)
	pc, err := rxe.PortCounters(1)
	require.NoError(t, err)
	require.Equal(t, 1, pc.Port)
	require.Contains(t, pc.HWCounters, "sent_pkts", "rxe's hw_counters: %v", pc.HWCounters)
	_, err = rxe.PortCounters(len(rxe.Attr().Ports) + 1)
	require.ErrorIs(t, err, urma.ErrNotFound)

	siw, err := urma.DeviceByName(env.SIW.Name)
	require.NoError(t, err)
	_, err = siw.PortCounters(1)
	require.NoError(t, err)
}
