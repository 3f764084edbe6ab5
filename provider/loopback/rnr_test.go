package loopback_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// TestRNRRetryCount pins the number of RNR retries: a SEND to a JFR with no
// receive posted fails with RNR_RETRY_CNT_EXC_ERR at its RNRRetry-th retry,
// not one earlier or later; 0 fails at once and 7 retries for ever. The
// timer's ticks are run by hand (its timeout is an hour).
func TestRNRRetryCount(t *testing.T) {
	for _, retries := range []int{0, 1, 3, 6, 7} {
		p := newPair(t)
		jfc, err := jetty.NewJFC(p.a, jetty.JFCConfig{})
		require.NoError(t, err)
		cfg := jetty.JFSConfig{JFC: jfc, RNRRetry: retries, RNRTimeout: time.Hour}
		if retries == 0 {
			cfg.RNRRetry = -1 // jetty's "no retry"; 0 takes the default
		}
		jfs, err := jetty.NewJFS(p.a, cfg)
		require.NoError(t, err)
		require.NoError(t, jfs.Send(p.remote, p.src.SGE(0, 8), 0, 1))
		crs := make([]jetty.CR, 1)
		ticks := retries
		if retries == 7 {
			ticks = 20 // for ever: still waiting after many
		}
		for i := 0; i < ticks; i++ {
			n, err := jfc.Poll(crs)
			require.NoError(t, err)
			require.Zero(t, n, "RNRRetry %d: a record after %d retries: %v", retries, i, crs[0])
			loopback.RNRTick(jfs.Raw())
		}
		n, err := jfc.Poll(crs)
		require.NoError(t, err)
		if retries == 7 {
			require.Zero(t, n, "RNRRetry 7 retries for ever")
			require.NoError(t, p.jfr.Recv(p.dst.SGE(0, 8), 2))
			p.pollOne(t, jfc)
			continue
		}
		require.Equal(t, 1, n, "RNRRetry %d: no record after %d retries", retries, ticks)
		require.Equal(t, urma.CRRNRRetryCntExcErr, crs[0].Status)
	}
}
