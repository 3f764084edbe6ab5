package loopback_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A sender with nothing outstanding delivers its first SEND itself, its
// record straight into the receiver's JFC, and leaves the next one in the
// inbox. A poll that is delivering the inbox when that happens must not
// hand out the inbox message before the record of the SEND posted ahead of
// it. The hook posts sender B's pair exactly between the poll's look at
// the ring and its read of the next message, the window in which a
// sender's messages could otherwise arrive out of order (TestRunsContend
// meets it by chance).
func TestInboxMessageDoesNotOvertakeDirectRecord(t *testing.T) {
	a, b := scenarioContexts(t, "same process")
	rjfc, err := jetty.NewJFC(b, jetty.JFCConfig{Depth: 64})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(b, jetty.JFRConfig{JFC: rjfc, Depth: 8})
	require.NoError(t, err)
	dst, err := segment.Alloc(b, 8*8, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	for i := range 8 {
		require.NoError(t, jfr.Recv(dst.SGE(uint64(i)*8, 8), uint64(i)))
	}
	type sender struct {
		jfs *jetty.JFS
		jfc *jetty.JFC
		rem *jetty.Remote
		src *segment.Segment
	}
	newSender := func(id uint64) *sender {
		s := &sender{}
		s.jfc, err = jetty.NewJFC(a, jetty.JFCConfig{Depth: 64})
		require.NoError(t, err)
		s.jfs, err = jetty.NewJFS(a, jetty.JFSConfig{JFC: s.jfc, Depth: 16})
		require.NoError(t, err)
		s.rem, err = jetty.ImportJFR(t.Context(), a, jfr.Descriptor(), 0)
		require.NoError(t, err)
		s.src, err = segment.Alloc(a, 16, segment.Config{Access: segment.LocalOnly})
		require.NoError(t, err)
		for j := range 2 {
			binary.NativeEndian.PutUint64(s.src.Bytes()[j*8:], id<<32|uint64(j))
		}
		return s
	}
	post := func(s *sender) error {
		return s.jfs.Post([]jetty.WR{
			{Opcode: urma.OpSend, To: s.rem, Local: []segment.SGE{s.src.SGE(0, 8)}},
			{Opcode: urma.OpSend, Flags: jetty.Signaled, To: s.rem, Local: []segment.SGE{s.src.SGE(8, 8)}},
		})
	}
	sa, sb := newSender(1), newSender(2)
	require.NoError(t, post(sa))

	var hookErr error
	calls := 0
	// Restored however the test ends: a hook left behind would post into
	// the next test's deliveries.
	t.Cleanup(loopback.SetInboxEntryHook(func() {
		// The first look is at A's inbox message; the second comes after
		// it was delivered, when B's pair lands.
		if calls++; calls == 2 {
			hookErr = post(sb)
		}
	}))
	var got []uint64
	crs := make([]jetty.CR, 16)
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 4 && time.Now().Before(deadline) {
		n, err := rjfc.Poll(crs)
		require.NoError(t, err)
		for _, cr := range crs[:n] {
			require.True(t, cr.OK(), "%v", cr)
			got = append(got, binary.NativeEndian.Uint64(dst.Bytes()[cr.UserCtx*8:]))
		}
	}
	require.NoError(t, hookErr)
	require.GreaterOrEqual(t, calls, 2, "the poll never came back for a second inbox message: the sends did not take the paths this test is about")
	want := []uint64{1 << 32, 1<<32 | 1, 2 << 32, 2<<32 | 1}
	require.Equal(t, want, got, "messages in the order received (sender<<32 | index)")
	for _, s := range []*sender{sa, sb} {
		pollN(t, s.jfc, 1, 5*time.Second)
		require.NoError(t, s.rem.Close())
		require.NoError(t, s.jfs.Close())
		require.NoError(t, s.src.Close())
		require.NoError(t, s.jfc.Close())
	}
	require.NoError(t, jfr.Close())
	require.NoError(t, dst.Close())
	require.NoError(t, rjfc.Close())
}
