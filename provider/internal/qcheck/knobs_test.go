package qcheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/qcheck"
)

func TestSendKnobs(t *testing.T) {
	with := attr
	with.ErrorSuspend, with.ErrTimeout = true, true
	with.OrderCap = provider.OrderCapOf(provider.OrderOL, provider.OrderNO)
	good := provider.JFSConfig{Mode: provider.RM, Depth: 64, MaxSGE: 4, RNRRetry: 7}
	for name, c := range map[string]struct {
		mut           func(*provider.JFSConfig)
		without, with error
	}{
		"none":           {func(*provider.JFSConfig) {}, nil, nil},
		"error suspend":  {func(c *provider.JFSConfig) { c.ErrorSuspend = true }, provider.ErrNotSupported, nil},
		"err timeout":    {func(c *provider.JFSConfig) { c.ErrTimeout = 18 }, provider.ErrNotSupported, nil},
		"err timeout 32": {func(c *provider.JFSConfig) { c.ErrTimeout = 33 }, provider.ErrInvalid, provider.ErrInvalid},
		"order OL":       {func(c *provider.JFSConfig) { c.Order = provider.OrderOL }, provider.ErrNotSupported, nil},
		"order OT":       {func(c *provider.JFSConfig) { c.Order = provider.OrderOT }, provider.ErrNotSupported, provider.ErrNotSupported},
		"order 9":        {func(c *provider.JFSConfig) { c.Order = 9 }, provider.ErrInvalid, provider.ErrInvalid},
	} {
		cfg := good
		c.mut(&cfg)
		require.ErrorIs(t, qcheck.Send(&cfg, &attr, "dev0"), c.without, name)
		require.ErrorIs(t, qcheck.Send(&cfg, &with, "dev0"), c.with, name)
	}
}

func TestRxThreshold(t *testing.T) {
	with := attr
	with.RxThreshold = true
	require.NoError(t, qcheck.RxThreshold(0, 8, &attr, "dev0"), "zero needs nothing")
	require.ErrorIs(t, qcheck.RxThreshold(1, 8, &attr, "dev0"), provider.ErrNotSupported)
	require.NoError(t, qcheck.RxThreshold(8, 8, &with, "dev0"))
	require.ErrorIs(t, qcheck.RxThreshold(9, 8, &with, "dev0"), provider.ErrInvalid)
	require.ErrorIs(t, qcheck.RxThreshold(-1, 8, &with, "dev0"), provider.ErrInvalid)
}
