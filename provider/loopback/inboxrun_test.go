package loopback_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// runTarget is a JFR of the pair's target context with its own JFC, so
// that the order of its records can be checked apart from another's.
type runTarget struct {
	jfc    *jetty.JFC
	jfr    *jetty.JFR
	remote *jetty.Remote
	base   uint64 // where its receive buffers start in p.dst
}

const runRecvSize = 128

// newRunTarget makes a JFR of depth receives of runRecvSize bytes each
// from base in p.dst, all posted, with a JFC on jfce (nil: none).
func newRunTarget(t *testing.T, p *pair, depth int, base uint64, jfce *jetty.JFCE) *runTarget {
	t.Helper()
	jfc, err := jetty.NewJFC(p.b, jetty.JFCConfig{Depth: 1024, JFCE: jfce})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(p.b, jetty.JFRConfig{JFC: jfc, Depth: depth})
	require.NoError(t, err)
	remote, err := jetty.ImportJFR(t.Context(), p.a, jfr.Descriptor(), 0)
	require.NoError(t, err)
	rt := &runTarget{jfc: jfc, jfr: jfr, remote: remote, base: base}
	for i := range depth {
		require.NoError(t, jfr.Recv(p.dst.SGE(base+uint64(i)*runRecvSize, runRecvSize), uint64(i)))
	}
	return rt
}

// runSend is a SEND of size bytes of p.src from offset off, with immediate
// data (SEND_IMM) when imm is not zero.
func runSend(p *pair, to *runTarget, ctx uint64, off, size uint32, imm uint64) jetty.WR {
	w := jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, UserCtx: ctx, To: to.remote,
		Local: []segment.SGE{p.src.SGE(uint64(off), size)}}
	if imm != 0 {
		w.Opcode, w.Imm, w.Flags = urma.OpSendImm, imm, w.Flags|jetty.Solicited
	}
	return w
}

// checkArrived polls len(sent) receive records of to, which must be its
// next receives in order, and checks each message's bytes and immediate
// data against the request sent; first is the index of its first receive.
func (rt *runTarget) checkArrived(t *testing.T, p *pair, sent []jetty.WR, first int) {
	t.Helper()
	recvs := pollN(t, rt.jfc, len(sent), 5*time.Second)
	for i, cr := range recvs {
		w := sent[i]
		require.Equal(t, urma.CRSuccess, cr.Status, "message %d: %v", i, cr)
		require.Equal(t, uint64(first+i), cr.UserCtx, "message %d took receive %d: %v", i, cr.UserCtx, recvs)
		require.Equal(t, crOpOf(w.Opcode), cr.Opcode, "message %d", i)
		require.Equal(t, w.Local[0].Len, cr.Len, "message %d", i)
		if w.Opcode == urma.OpSendImm {
			require.Equal(t, w.Imm, cr.Imm, "message %d", i)
		}
		at := rt.base + uint64(first+i)*runRecvSize
		want := p.src.Bytes()[w.Local[0].Addr-p.src.Descriptor().VA:][:w.Local[0].Len]
		require.True(t, bytes.Equal(want, p.dst.Bytes()[at:at+uint64(cr.Len)]), "message %d: bytes differ", i)
	}
}

// TestInboxRunsInPostLists posts lists of small SENDs, which go to the
// inbox in runs with one reservation of cells each, and checks that they
// arrive and complete as the usual way would have them: in order, with
// their bytes and immediate data, a run ending at a SEND to another queue
// or a WRITE,
// at a request that fails its checks (which Post reports, with everything
// before it posted), at a full queue, and at an inbox without room for the
// whole run.
func TestInboxRunsInPostLists(t *testing.T) {
	p := newPair(t)
	for i := range p.src.Bytes() {
		p.src.Bytes()[i] = byte(i*13 + 5)
	}
	jfs, err := jetty.NewJFS(p.a, jetty.JFSConfig{JFC: p.jfcA, Depth: 40})
	require.NoError(t, err)
	one := newRunTarget(t, p, 128, 0, nil)
	other := newRunTarget(t, p, 8, 128*runRecvSize, nil)
	sendsDone := func(n int, first uint64) {
		t.Helper()
		sends := pollN(t, p.jfcA, n, 5*time.Second)
		for i, cr := range sends {
			require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
			require.Equal(t, first+uint64(i), cr.UserCtx, "sender records out of order: %v", sends)
		}
	}

	// A run to one queue, a SEND to another, a run to the first again
	// cut by a WRITE, then a request without a target.
	var toOne, toOther []jetty.WR
	var wrs []jetty.WR
	for i := range 21 {
		size, off := uint32(i*7%81), uint32(i*97)
		w := runSend(p, one, uint64(i), off, size, uint64(i%3)*1000+uint64(i))
		switch i {
		case 12:
			w.To = other.remote
			toOther = append(toOther, w)
		case 16:
			w = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, UserCtx: uint64(i), To: one.remote,
				Local: []segment.SGE{p.src.SGE(0, 64)}, Remote: p.tgt.SGE(40000, 64)}
		default:
			toOne = append(toOne, w)
		}
		wrs = append(wrs, w)
	}
	bad := runSend(p, one, 21, 0, 8, 0)
	bad.To = nil // a JFS's request needs one
	wrs = append(wrs, bad, runSend(p, one, 22, 0, 8, 0))
	before := loopback.InboxRuns(jfs.Raw())
	err = jfs.Post(wrs)
	var pe *jetty.PostError
	require.True(t, errors.As(err, &pe), "post: %v", err)
	require.Equal(t, 21, pe.Index, "post: %v", err)
	one.checkArrived(t, p, toOne, 0)
	other.checkArrived(t, p, toOther, 0)
	sendsDone(21, 0)
	require.Equal(t, p.src.Bytes()[:64], p.dst.Bytes()[40000:40064], "the WRITE's bytes")
	require.GreaterOrEqual(t, loopback.InboxRuns(jfs.Raw())-before, uint64(2), "the runs did not go to the inbox in one reservation each")

	// A list longer than the queue: the runs stop at its depth, and the
	// request after them finds the queue full.
	wrs = wrs[:0]
	for i := range 45 {
		wrs = append(wrs, runSend(p, one, uint64(100+i), uint32(i), 8, 0))
	}
	err = jfs.Post(wrs)
	require.True(t, errors.As(err, &pe), "post: %v", err)
	require.Equal(t, 40, pe.Index, "post: %v", err)
	require.ErrorIs(t, err, urma.ErrAgain)
	one.checkArrived(t, p, wrs[:40], len(toOne))
	sendsDone(40, 100)

	// A run larger than a small queue's inbox of 64 cells (80-byte
	// messages take four): the reservation fails, the messages go one by
	// one until the inbox is full, and the rest the usual way, all in
	// order.
	small := newRunTarget(t, p, 32, 136*runRecvSize, nil)
	wrs = wrs[:0]
	for i := range 30 {
		wrs = append(wrs, runSend(p, small, uint64(200+i), uint32(i*3), 80, uint64(i+1)))
	}
	require.NoError(t, jfs.Post(wrs))
	small.checkArrived(t, p, wrs, 0)
	sendsDone(30, 200)
	require.NotZero(t, loopback.InboxConsumed(small.jfr.Raw()), "no message went through the inbox")
}

// TestInboxRunRaisesSolicitedEvent posts a run whose last SEND alone is
// solicited to a receive queue whose JFC is armed for solicited records:
// the run raises the event as it leaves the messages, before anyone
// delivers them (the senders' timer is held off).
func TestInboxRunRaisesSolicitedEvent(t *testing.T) {
	defer loopback.SetInboxTick(time.Hour)()
	p := newPair(t)
	jfce, err := jetty.NewJFCE(p.b)
	require.NoError(t, err)
	rt := newRunTarget(t, p, 8, 0, jfce)
	rjfc, remote := rt.jfc, rt.remote
	send := func(ctx uint64, f jetty.Flags) jetty.WR {
		return jetty.WR{Opcode: urma.OpSend, Flags: f, UserCtx: ctx, To: remote, Local: []segment.SGE{p.src.SGE(0, 8)}}
	}
	require.NoError(t, p.jfs.Post([]jetty.WR{send(0, 0)})) // the usual way: nothing else outstanding
	require.Len(t, pollN(t, rjfc, 1, 5*time.Second), 1)
	require.NoError(t, rjfc.Rearm(true))
	before := loopback.InboxRuns(p.jfs.Raw())
	require.NoError(t, p.jfs.Post([]jetty.WR{send(1, 0), send(2, 0), send(3, 0), send(4, jetty.Solicited)}))
	require.Equal(t, before+1, loopback.InboxRuns(p.jfs.Raw()), "the SENDs did not go to the inbox as one run")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, rjfc.Wait(ctx), "no event for the run's solicited SEND")
	require.Len(t, pollN(t, rjfc, 4, 5*time.Second), 4)
}
