package loopback

import (
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
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
	_, ok := r.ReserveRecord() // the dead producer's slot
	require.True(t, ok)
	j.view.push(&provider.CR{Status: provider.CRSuccess, WROpcode: provider.OpWrite, UserCtx: 42}, 0)

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
	_, ok := q.ring.Claim() // the dead sender's claim
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

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// A sender process that died in an inbox leaves cells reserved and not
// published, maybe the consumer lock held and its routes taken. The repair
// publishes the cells as holes (and the further cells of their entry are
// skipped), frees the lock and the routes: the messages after them are
// delivered.
func TestRepairInbox(t *testing.T) {
	c, j, q := openRepairTest(t)
	seg, err := c.AllocSegment(4096, provider.SegmentConfig{Access: provider.AccessLocalOnly})
	require.NoError(t, err)
	_, err = q.PostRecv([]provider.RecvWR{{UserCtx: 5, Local: []provider.SGE{{Seg: seg, Addr: seg.Desc().VA, Len: 64}}}})
	require.NoError(t, err)
	ib := q.inbox
	b := ib.box
	dead := uint64(deadPID(t))

	// The dead sender: two cells reserved, the second published as the
	// rest of an entry, the first never; a route; the consumer lock.
	pos, ok := b.Ring().ReserveRecords(2)
	require.True(t, ok)
	shm.StoreRelease(b.Ring().Seq(pos+1), (pos+2)|inbox.Cont)
	atomic.StoreUint64(&ib.routes[3].Owner, dead<<32|9)
	require.True(t, ib.box.Held().CompareAndSwap(0, uint32(dead)))
	// A live sender's message behind them, on a route of this process.
	atomic.StoreUint64(&ib.routes[0].Owner, uint64(os.Getpid())<<32|1)
	_, ok = b.Put(inbox.Header{Len: 5, Route: 0, Opcode: uint8(provider.OpSend)}, 0, []byte("after"))
	require.True(t, ok)

	crs := make([]provider.CR, 4)
	n, err := j.Poll(crs)
	require.NoError(t, err)
	require.Zero(t, n, "the message behind the dead sender's cells is delivered before the repair")

	held := c.heldSlots()
	require.Equal(t, []heldSlot{{inbox: q.recvq, pos: pos}}, held, "the unpublished cell is held; the published rest is not")
	c.repair(held)
	require.Zero(t, ib.box.Held().Load(), "the dead holder's lock is free")
	require.Zero(t, atomic.LoadUint64(&ib.routes[3].Owner), "the dead sender's route is free")
	require.NotZero(t, atomic.LoadUint64(&ib.routes[0].Owner), "a live sender's route is kept")

	n, err = j.Poll(crs)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the hole and the orphan cell are skipped, the message after them delivered")
	require.Equal(t, provider.CRSuccess, crs[0].Status, "%v", crs[0])
	require.Equal(t, uint64(5), crs[0].UserCtx)
	require.Equal(t, "after", string(seg.(*segment).ref.mem[:5]))
	require.Empty(t, c.heldSlots())
}

// A process that died holding the consumer lock of an inbox, with no cell
// held: the end of its connection still schedules the repair, which frees
// the lock.
func TestRepairInboxLockOnly(t *testing.T) {
	c, _, q := openRepairTest(t)
	ib := q.inbox
	require.False(t, c.inboxesShared())
	require.True(t, ib.box.Held().CompareAndSwap(0, uint32(deadPID(t))))
	require.Empty(t, c.heldSlots())
	require.True(t, c.inboxesShared(), "a lock held by another process is not seen")
	c.repair(nil)
	require.Zero(t, ib.box.Held().Load(), "the dead holder's lock is free")
	require.False(t, c.inboxesShared())
}

// A Close of a queue whose inbox's consumer lock a dead process holds
// does not wait for the repair (which skips closed queues): it takes the
// lock from the dead holder.
func TestInboxLockFromDeadHolder(t *testing.T) {
	_, _, q := openRepairTest(t)
	require.True(t, q.inbox.box.Held().CompareAndSwap(0, uint32(deadPID(t))))
	done := make(chan struct{})
	go func() {
		defer close(done)
		require.NoError(t, q.Close())
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a lock whose holder is dead")
	}
}
