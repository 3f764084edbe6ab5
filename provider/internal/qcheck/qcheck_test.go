package qcheck_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/qcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

var attr = provider.DeviceAttr{Modes: provider.RM | provider.RC, MaxJFSDepth: 64, MaxJFRDepth: 32,
	MaxJFSSGE: 4, MaxJFRSGE: 2, MaxInline: 128}

func TestSend(t *testing.T) {
	good := provider.JFSConfig{Mode: provider.RM, Depth: 64, MaxSGE: 4, MaxInline: 128, RNRRetry: 7}
	require.NoError(t, qcheck.Send(&good, &attr, "dev0"))
	for name, c := range map[string]struct {
		mut  func(*provider.JFSConfig)
		want error
	}{
		"no mode":        {func(c *provider.JFSConfig) { c.Mode = 0 }, provider.ErrInvalid},
		"two modes":      {func(c *provider.JFSConfig) { c.Mode = provider.RM | provider.RC }, provider.ErrInvalid},
		"UM":             {func(c *provider.JFSConfig) { c.Mode = provider.UM }, provider.ErrNotSupported},
		"depth 0":        {func(c *provider.JFSConfig) { c.Depth = 0 }, provider.ErrInvalid},
		"depth 65":       {func(c *provider.JFSConfig) { c.Depth = 65 }, provider.ErrInvalid},
		"sge 0":          {func(c *provider.JFSConfig) { c.MaxSGE = 0 }, provider.ErrInvalid},
		"sge 5":          {func(c *provider.JFSConfig) { c.MaxSGE = 5 }, provider.ErrInvalid},
		"inline -1":      {func(c *provider.JFSConfig) { c.MaxInline = -1 }, provider.ErrInvalid},
		"inline 129":     {func(c *provider.JFSConfig) { c.MaxInline = 129 }, provider.ErrInvalid},
		"rnr retry 8":    {func(c *provider.JFSConfig) { c.RNRRetry = 8 }, provider.ErrInvalid},
		"rnr retry -1":   {func(c *provider.JFSConfig) { c.RNRRetry = -1 }, provider.ErrInvalid},
		"rnr timeout -1": {func(c *provider.JFSConfig) { c.RNRTimeout = -1 }, provider.ErrInvalid},
	} {
		cfg := good
		c.mut(&cfg)
		require.ErrorIs(t, qcheck.Send(&cfg, &attr, "dev0"), c.want, name)
	}
}

func TestRecv(t *testing.T) {
	good := provider.JFRConfig{Mode: provider.RC, Depth: 32, MaxSGE: 2, TokenPolicy: provider.TokenPlainText}
	require.NoError(t, qcheck.Recv(&good, &attr, "dev0"))
	for name, c := range map[string]struct {
		mut  func(*provider.JFRConfig)
		want error
	}{
		"no mode":      {func(c *provider.JFRConfig) { c.Mode = 0 }, provider.ErrInvalid},
		"UM":           {func(c *provider.JFRConfig) { c.Mode = provider.UM }, provider.ErrNotSupported},
		"depth 0":      {func(c *provider.JFRConfig) { c.Depth = 0 }, provider.ErrInvalid},
		"depth 33":     {func(c *provider.JFRConfig) { c.Depth = 33 }, provider.ErrInvalid},
		"sge 3":        {func(c *provider.JFRConfig) { c.MaxSGE = 3 }, provider.ErrInvalid},
		"token signed": {func(c *provider.JFRConfig) { c.TokenPolicy = provider.TokenSigned }, provider.ErrNotSupported},
	} {
		cfg := good
		c.mut(&cfg)
		require.ErrorIs(t, qcheck.Recv(&cfg, &attr, "dev0"), c.want, name)
	}
}
