package loopback

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

// openRepairTest opens a context with a JFC and a JFR completing into it,
// and one receive posted.
func openRepairTest(t *testing.T) (*lbContext, *jfc, *jfrObj) {
	t.Helper()
	c, err := theDevice.Open(0)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	pj, err := c.NewJFC(provider.JFCConfig{Depth: 8})
	require.NoError(t, err)
	pr, err := c.NewJFR(provider.JFRConfig{Depth: 4, MaxSGE: 1, Mode: provider.RM, JFC: pj})
	require.NoError(t, err)
	return c.(*lbContext), pj.(*jfc), pr.(*jfrObj)
}

// A producer that died between reserving a JFC slot and publishing it
// hides every record after it, until the repair publishes it as a hole.
func TestRepairJFCHole(t *testing.T) {
	c, j, _ := openRepairTest(t)
	r := j.view.ring
	_, ok := r.reserveRecord() // the dead producer's slot
	require.True(t, ok)
	j.view.push(&provider.CR{Status: provider.CRSuccess, Opcode: provider.OpWrite, UserCtx: 42}, 0)

	crs := make([]provider.CR, 4)
	n, err := j.Poll(crs)
	require.NoError(t, err)
	require.Zero(t, n, "the record after the held slot is hidden")

	held := c.heldSlots()
	require.Len(t, held, 1)
	c.repair(held)
	n, err = j.Poll(crs)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the hole is skipped, the record after it read")
	require.Equal(t, uint64(42), crs[0].UserCtx)
	require.Empty(t, c.heldSlots())
}

// A sender that died between taking a receive and handing it back: the
// receive comes back flushed and its slot takes receives again.
func TestRepairJFRClaim(t *testing.T) {
	c, j, q := openRepairTest(t)
	seg, err := c.AllocSegment(4096, provider.SegmentConfig{Access: provider.AccessLocalOnly})
	require.NoError(t, err)
	post := func(ctx uint64) error {
		_, err := q.PostRecv([]provider.RecvWR{{UserCtx: ctx, Local: []provider.SGE{{Seg: seg, Addr: seg.Desc().VA, Len: 64}}}})
		return err
	}
	require.NoError(t, post(7))
	_, ok := q.ring.claim() // the dead sender's claim
	require.True(t, ok)
	for i := range 3 {
		require.NoError(t, post(uint64(10+i)))
	}
	require.Error(t, post(99), "the held slot keeps the ring full")

	c.repair(c.heldSlots())
	crs := make([]provider.CR, 4)
	n, err := j.Poll(crs)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, provider.CRWRFlushErr, crs[0].Status)
	require.Equal(t, uint64(7), crs[0].UserCtx)
	require.NotZero(t, crs[0].Flags&provider.CRFlagRecv)
	require.NoError(t, post(99), "the slot takes receives again")
}

// Slots held by a process that is only stopped are left alone: it will
// finish them when it runs again.
func TestStoppedProcess(t *testing.T) {
	require.False(t, stopped(int32(os.Getpid())))
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	pid := int32(cmd.Process.Pid)
	require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool { return stopped(pid) }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool { return !stopped(pid) }, 5*time.Second, 10*time.Millisecond)
}
