//go:build cgo && urma_verbs

package ib_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/providertest"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"

	_ "github.com/urma-go/sdk/provider/ib"
)

// TestConformance runs the provider conformance suite on Soft-RoCE and
// soft-iWARP in the guest, with both contexts on the device's first EID.
// What iWARP lacks, its attributes declare. The guest's siw.ko carries
// driver fixes (test/vm/setup's patch_siw) without which the suite fails
// about every other run.
func TestConformance(t *testing.T) {
	env := vm.Require(t)
	if os.Getenv("URMA_IB_LOG") != "" {
		provider.SetLog(func(l provider.LogLevel, msg string) { t.Logf("%v %s", l, msg) }, provider.LogInfo)
		defer provider.SetLog(nil, 0)
	}
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			dev, err := urma.DeviceByName(d.Name)
			require.NoError(t, err)
			providertest.Run(t, providertest.Harness{Timeout: 20 * time.Second,
				Pair: func(t testing.TB) (*urma.Context, *urma.Context) {
					a, err := urma.Open(dev, 0, nil)
					require.NoError(t, err)
					b, err := urma.Open(dev, 0, nil)
					require.NoError(t, err)
					return a, b
				}})
		})
	}
}
