package perf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/urma-go/sdk/provider/ib"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestVerbs runs the tests through the ib provider on the guest's
// Soft-RoCE and soft-iWARP devices, both sides on the device's first EID,
// with the default loops and the tuned ones. iWARP has no atomics and no
// UM: the device attributes say so, and perf refuses with their error.
func TestVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		dev, err := urma.DeviceByName(d.Name)
		require.NoError(t, err)
		attr := dev.Attr()
		for _, tm := range testModes(t) {
			for _, tuned := range []bool{false, true} {
				verbsRun(t, d.Name, attr, tm, tuned)
			}
		}
	}
}

// verbsRun is one test of TestVerbs on device dev.
func verbsRun(t *testing.T, dev string, attr urma.DeviceAttr, tm testMode, tuned bool) {
	test, mode := tm.test, tm.mode
	t.Run(dev+"/"+tm.name+"/"+loops(tuned), func(t *testing.T) {
		cfg := Config{Test: test, Mode: mode, Iters: 200, Sizes: []int{64, 4096}, Tuned: tuned}
		switch {
		case test.Op == Atomic:
			cfg.Sizes = nil // an atomic moves its 8-byte operand
		case mode == urma.UM:
			cfg.Sizes = []int{64, 1024} // rxe's UM messages fit its MTU
		}
		rep, table, err := pairOn(t, dev, 0, 0, cfg)
		if test.Op == Atomic && attr.AtomicOps == 0 || !attr.SupportsMode(mode) {
			require.ErrorIs(t, err, urma.ErrNotSupported, table)
			return
		}
		require.NoError(t, err, table)
		t.Log("\n" + table)
		if test.BW {
			require.NotEmpty(t, rep.BW)
			assert.Greater(t, rep.BW[0].AvgMBs, 0.0)
		} else {
			require.NotEmpty(t, rep.Latency)
			assert.Greater(t, rep.Latency[0].Median, 0.0)
		}
	})
}
