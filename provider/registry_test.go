package provider_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/provider"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// The registry lives in package urma; these tests sit here with the other
// value-type tests and reach it through the public API.

func TestProviders(t *testing.T) {
	assert.Contains(t, urma.Providers(), "loopback")
	names := urma.Providers()
	for i := 1; i < len(names); i++ {
		assert.Less(t, names[i-1], names[i], "sorted")
	}
}

func TestUnknownProvider(t *testing.T) {
	devs, err := urma.ProviderDevices("nope")
	require.Error(t, err)
	assert.Nil(t, devs)
	assert.Contains(t, err.Error(), "unknown provider")
	assert.Contains(t, err.Error(), `"nope"`)
	assert.Contains(t, err.Error(), "forgotten import?")
	assert.True(t, errors.Is(err, urma.ErrNotFound))
	var oe *urma.OpError
	assert.True(t, errors.As(err, &oe))
}

func TestRegisterTwicePanics(t *testing.T) {
	assert.PanicsWithValue(t, "urma: Register called twice for provider loopback", func() {
		urma.Register(fakeDriver{"loopback"})
	})
	assert.Panics(t, func() { urma.Register(nil) })
}

type fakeDriver struct{ name string }

func (f fakeDriver) Name() string                        { return f.name }
func (f fakeDriver) Devices() ([]provider.Device, error) { return nil, nil }

func TestDeviceByName(t *testing.T) {
	d, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	assert.Equal(t, "loopback0", d.Name())
	assert.Equal(t, "loopback", d.Provider())
	assert.Equal(t, "loopback/loopback0", d.String())
	assert.Len(t, d.EIDs(), 4)

	_, err = urma.DeviceByName("mlx5_0")
	assert.ErrorIs(t, err, urma.ErrNotFound)
	assert.ErrorContains(t, err, `no device named "mlx5_0"; devices: loopback0`, "the error says what there is")
}

func TestDeviceByEID(t *testing.T) {
	for i := 1; i <= 4; i++ {
		eid := urma.EIDFromAddr(netip.AddrFrom4([4]byte{127, 0, 0, byte(i)}))
		d, err := urma.DeviceByEID(eid)
		require.NoError(t, err)
		assert.Equal(t, "loopback0", d.Name())
		assert.Equal(t, i-1, d.EIDIndex(eid))
	}
	eid, err := urma.ParseEID("127.0.0.5")
	require.NoError(t, err)
	_, err = urma.DeviceByEID(eid)
	assert.ErrorIs(t, err, urma.ErrNotFound)
	d, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	assert.Equal(t, -1, d.EIDIndex(eid))
}

func TestOpenBadIndex(t *testing.T) {
	d, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	for _, i := range []int{-1, 4} {
		_, err := urma.Open(d, i, nil)
		assert.ErrorIs(t, err, urma.ErrInvalid, "index %d", i)
	}
	_, err = urma.Open(nil, 0, nil)
	assert.ErrorIs(t, err, urma.ErrInvalid)
}
