package loopback_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A SEND that found no receive in another process waits (RNR). A receive
// posted there cannot kick this process, but polling the sender's JFC
// retries: with an RNR timeout of an hour, the SEND still completes as soon
// as the receive is there.
func TestXProcStalledSendRetriesOnPoll(t *testing.T) {
	x := newXProc(t)
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{RNRRetry: 7, RNRTimeout: time.Hour})
	jfr, rjfc, rem := x.peerJFR(t, 4)
	buf, err := segment.Alloc(x.b, 64, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	msg := []byte("retried on poll")
	require.NoError(t, jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled | jetty.Inline,
		To: rem, UserCtx: 7, Inline: msg}}))
	// Polled empty while nothing can arrive: the request keeps waiting.
	crs := make([]jetty.CR, 1)
	for range 100 {
		n, err := jfc.Poll(crs)
		require.NoError(t, err)
		require.Zero(t, n, "completed without a receive: %v", crs[0])
	}
	require.NoError(t, jfr.Recv(buf.SGE(0, 64), 9))
	cr := pollN(t, jfc, 1, 10*time.Second)[0]
	require.True(t, cr.OK(), "%v", cr)
	require.Equal(t, uint64(7), cr.UserCtx)
	rcr := pollN(t, rjfc, 1, 10*time.Second)[0]
	require.True(t, rcr.OK(), "%v", rcr)
	require.Equal(t, uint64(9), rcr.UserCtx)
	require.Equal(t, msg, buf.Bytes()[:len(msg)])
}

// Retries made by polling do not count against the RNR retry limit and do
// not put the RNR timer off: a sender that polls all the time still fails
// with RNR_RETRY_EXC_ERR once the timer has retried RNRRetry times.
func TestXProcPollingKeepsRNRLimit(t *testing.T) {
	x := newXProc(t)
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{RNRRetry: 2, RNRTimeout: 5 * time.Millisecond})
	_, _, rem := x.peerJFR(t, 4)
	require.NoError(t, jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled | jetty.Inline,
		To: rem, UserCtx: 3, Inline: []byte("nobody listens")}}))
	crs := make([]jetty.CR, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := jfc.Poll(crs)
		require.NoError(t, err)
		if n == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no RNR failure while polling")
	}
	require.Equal(t, urma.CRRNRRetryCntExcErr, crs[0].Status, "%v", crs[0])
	require.Equal(t, uint64(3), crs[0].UserCtx)
}
