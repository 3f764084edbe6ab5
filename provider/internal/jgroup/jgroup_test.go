package jgroup

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

func TestGroupRules(t *testing.T) {
	var tab Table
	cfg := provider.JettyGroupConfig{Policy: provider.GroupPolicyHashHint, TokenPolicy: provider.TokenPlainText, Token: 9}
	g, err := tab.New(provider.EID{}, 7, cfg, 2)
	require.NoError(t, err)
	require.Equal(t, provider.KindJettyGroup, g.Desc().Kind)
	require.Equal(t, provider.RM, g.Desc().Mode)
	require.ErrorIs(t, g.Join(1, provider.RC, provider.TokenPlainText, 9), provider.ErrInvalid)
	require.ErrorIs(t, g.Join(1, provider.RM, provider.TokenPlainText, 8), provider.ErrInvalid)
	require.NoError(t, g.Join(1, provider.RM, provider.TokenPlainText, 9))
	require.NoError(t, g.Join(2, provider.RM, provider.TokenPlainText, 9))
	require.ErrorIs(t, g.Join(3, provider.RM, provider.TokenPlainText, 9), provider.ErrAgain, "over the member limit")

	policy, ids, err := tab.Lookup(g.Desc().ID.ID, provider.TokenPlainText, 9)
	require.NoError(t, err)
	require.Equal(t, provider.GroupPolicyHashHint, policy)
	require.Equal(t, []uint32{1, 2}, ids)
	_, _, err = tab.Lookup(g.Desc().ID.ID, provider.TokenPlainText, 10)
	require.ErrorIs(t, err, provider.ErrPermission)
	_, _, err = tab.Lookup(g.Desc().ID.ID, provider.TokenNone, 0)
	require.ErrorIs(t, err, provider.ErrInvalid)

	require.ErrorIs(t, g.Close(), provider.ErrBusy)
	g.Leave(1)
	g.Leave(1)
	require.Equal(t, []uint32{2}, g.Members())
	g.Leave(2)
	require.NoError(t, g.Close())
	require.ErrorIs(t, g.Close(), provider.ErrClosed)
	require.ErrorIs(t, g.Join(4, provider.RM, provider.TokenPlainText, 9), provider.ErrClosed)
	_, _, err = tab.Lookup(g.Desc().ID.ID, provider.TokenPlainText, 9)
	require.ErrorIs(t, err, provider.ErrNotFound)

	_, err = tab.New(provider.EID{}, 7, provider.JettyGroupConfig{Policy: 2}, 2)
	require.ErrorIs(t, err, provider.ErrInvalid)
	_, err = tab.New(provider.EID{}, 7, provider.JettyGroupConfig{Name: string(make([]byte, MaxName))}, 2)
	require.ErrorIs(t, err, provider.ErrInvalid)
}
