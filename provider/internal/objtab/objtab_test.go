package objtab_test

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider/internal/objtab"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func TestTable(t *testing.T) {
	var tab objtab.Table[string]
	tab.Add("seg1", objtab.RankMemory)
	tab.Add("jfc1", objtab.RankJFC)
	tab.Add("jfr1", objtab.RankRecv)
	tab.Add("jfs1", objtab.RankSend)
	tab.Add("seg2", objtab.RankMemory)
	tab.Add("jetty1", objtab.RankSend)
	tab.Add("jfce1", objtab.RankJFCE)
	require.True(t, tab.Remove("seg2"))
	require.False(t, tab.Remove("seg2"), "removed once")
	require.Equal(t, 6, tab.Len())
	require.Equal(t, []string{"seg1", "jfc1", "jfr1", "jfs1", "jetty1", "jfce1"}, slices.Collect(tab.All()), "creation order")
	require.Equal(t, []string{"jetty1", "jfs1", "jfr1", "jfc1", "jfce1", "seg1"}, tab.Drain(), "teardown order")
	require.Zero(t, tab.Len())
	require.Empty(t, tab.Drain())
}
