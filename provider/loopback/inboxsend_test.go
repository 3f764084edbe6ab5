package loopback_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// The inbox tests run SENDs to a JFR of this process, which go through its
// inbox (receiver-side delivery), and check what a caller sees: the same
// records, data and order as the usual way. InboxConsumed proves they
// went through the inbox.

// TestInboxStream sends messages of every inbox size (0 to 80 bytes), with
// and without immediate data and the solicited flag, while another
// goroutine polls the receiver and posts receives, and checks each
// message's bytes, record and order, and that of the sender's records.
func TestInboxStream(t *testing.T) {
	const n = 2000
	p := newPair(t)
	for i := range p.src.Bytes() {
		p.src.Bytes()[i] = byte(i * 7)
	}
	var wg sync.WaitGroup
	type arrival struct {
		cr     jetty.CR
		sameAs bool // the buffer held the bytes sent
	}
	got := make(chan arrival, n)
	recv := func(i int) error { return p.jfr.Recv(p.dst.SGE(uint64(i%64)*128, 128), uint64(i)) }
	// The first receives are posted before the first SEND: one that
	// found none would wait (RNR), and the SENDs behind it with it, the
	// usual way, for as long as the sender keeps ahead.
	const ahead = 64
	for i := range ahead {
		require.NoError(t, recv(i))
	}
	wg.Go(func() {
		crs := make([]jetty.CR, 16)
		for posted, done := ahead, 0; done < n; {
			for ; posted < n && posted-done < ahead; posted++ {
				if err := recv(posted); err != nil {
					panic(err)
				}
			}
			k, err := p.jfcB.Poll(crs)
			if err != nil {
				panic(err)
			}
			for _, cr := range crs[:k] {
				// The buffer is reposted only after this check.
				size := uint64(cr.Len)
				off, from := (cr.UserCtx%64)*128, cr.UserCtx%7
				same := bytes.Equal(p.dst.Bytes()[off:off+size], p.src.Bytes()[from:from+size])
				got <- arrival{cr, same}
			}
			done += k
		}
	})
	var sent []jetty.CR
	for i := range n {
		size := i % 81
		w := jetty.WR{Opcode: urma.OpSend, UserCtx: uint64(i), To: p.remote,
			Local: []segment.SGE{p.src.SGE(uint64(i%7), uint32(size))}}
		if i%3 == 0 {
			w.Opcode, w.Imm = urma.OpSendImm, uint64(i)<<8
		}
		if i%5 == 0 {
			w.Flags |= jetty.Solicited
		}
		if i%4 == 0 {
			w.Flags |= jetty.Signaled
		}
		for {
			err := p.jfs.Post([]jetty.WR{w})
			if err == nil {
				break
			}
			require.ErrorIs(t, err, urma.ErrAgain)
			sent = append(sent, pollN(t, p.jfcA, 1, 5*time.Second)...)
		}
	}
	sent = append(sent, pollN(t, p.jfcA, (n+3)/4-len(sent), 5*time.Second)...)
	for k, cr := range sent {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(4*k), cr.UserCtx, "sender records out of order: %v", cr)
	}
	wg.Wait()
	close(got)
	sender, err := p.jfs.Query()
	require.NoError(t, err)
	i := 0
	for a := range got {
		cr := a.cr
		require.True(t, a.sameAs, "message %d: the receive buffer does not hold what was sent", i)
		require.Equal(t, urma.CRSuccess, cr.Status, "message %d: %v", i, cr)
		require.Equal(t, uint64(i), cr.UserCtx, "message %d arrived out of order", i)
		require.Equal(t, uint32(i%81), cr.Len)
		require.Equal(t, i%5 == 0, cr.Flags&jetty.CRSolicited != 0, "message %d: %v", i, cr)
		if i%3 == 0 {
			require.Equal(t, jetty.CRSendImm, cr.Opcode)
			require.Equal(t, uint64(i)<<8, cr.Imm)
		} else {
			require.Equal(t, jetty.CRSend, cr.Opcode)
		}
		require.Equal(t, sender.ID, cr.RemoteID)
		i++
	}
	require.Equal(t, n, i)
	require.NotZero(t, loopback.InboxConsumed(p.jfr.Raw()), "no message went through the inbox")
}

// TestInboxReceiverNeverPolls sends to a JFR whose JFC nobody polls: the
// sender, polling its own JFC, delivers the message itself, so its
// completion still comes, and the message is in the buffer and its record
// in the receiver's JFC. (The first SEND of a queue with nothing else
// outstanding goes the usual way; the second, to the inbox.)
func TestInboxReceiverNeverPolls(t *testing.T) {
	p := newPair(t)
	copy(p.src.Bytes(), "first, then never polled")
	require.NoError(t, p.jfr.Recv(p.dst.SGE(0, 64), 7))
	require.NoError(t, p.jfr.Recv(p.dst.SGE(64, 64), 8))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(0, 5), 0, 1))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(7, 17), 0, 2))
	crs := pollN(t, p.jfcA, 2, 5*time.Second)
	for i, cr := range crs {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(i+1), cr.UserCtx)
	}
	require.Equal(t, "never polled", string(p.dst.Bytes()[64+5:64+17]), "completed before the data arrived")
	require.NotZero(t, loopback.InboxConsumed(p.jfr.Raw()), "the message did not go through the inbox")
	rcrs := pollN(t, p.jfcB, 2, 5*time.Second)
	for i, rcr := range rcrs {
		require.Equal(t, urma.CRSuccess, rcr.Status, "%v", rcr)
		require.Equal(t, uint64(7+i), rcr.UserCtx)
	}
	require.Equal(t, uint32(17), rcrs[1].Len)
}

// TestInboxMixedListInOrder posts one list of small SENDs (inbox), a large
// SEND and a WRITE_IMM (the usual way), all consuming receives of one JFR:
// the receives complete in posting order, and so do the sender's records.
func TestInboxMixedListInOrder(t *testing.T) {
	p := newPair(t)
	for i := range 8 {
		require.NoError(t, p.jfr.Recv(p.dst.SGE(uint64(i)*512, 512), uint64(i)))
	}
	send := func(ctx uint64, size uint32) jetty.WR {
		return jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, UserCtx: ctx, To: p.remote,
			Local: []segment.SGE{p.src.SGE(0, size)}}
	}
	writeImm := jetty.WR{Opcode: urma.OpWriteImm, Flags: jetty.Signaled, UserCtx: 3, To: p.remote, Imm: 33,
		Local: []segment.SGE{p.src.SGE(0, 16)}, Remote: p.tgt.SGE(8192, 16)}
	wrs := []jetty.WR{send(0, 8), send(1, 40), send(2, 300), writeImm, send(4, 8), send(5, 200), send(6, 1), send(7, 80)}
	require.NoError(t, p.jfs.Post(wrs))
	recvs := pollN(t, p.jfcB, len(wrs), 5*time.Second)
	sends := pollN(t, p.jfcA, len(wrs), 5*time.Second)
	for i, cr := range recvs {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(i), cr.UserCtx, "receive %d completed out of order: %v", i, recvs)
		require.Equal(t, crOpOf(wrs[i].Opcode), cr.Opcode, "receive %d: %v", i, cr)
	}
	for i, cr := range sends {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(i), cr.UserCtx, "sender records out of order: %v", sends)
	}
	require.NotZero(t, loopback.InboxConsumed(p.jfr.Raw()), "no message went through the inbox")
}

// TestInboxFailureMidStream sends five small SENDs to receives of which the
// third is too small: the first two arrive, the third fails on both sides
// and the JFS goes to ERROR, the last two are flushed and never arrive,
// and the two receives left stay posted.
func TestInboxFailureMidStream(t *testing.T) {
	p := newPair(t)
	sizes := []uint32{8, 8, 4, 8, 8, 8, 8}
	for i, n := range sizes {
		require.NoError(t, p.jfr.Recv(p.dst.SGE(uint64(i)*64, n), uint64(i)))
	}
	var wrs []jetty.WR
	for i := range 5 {
		wrs = append(wrs, jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, UserCtx: uint64(i), To: p.remote,
			Local: []segment.SGE{p.src.SGE(0, 8)}})
	}
	require.NoError(t, p.jfs.Post(wrs))
	recvs := pollN(t, p.jfcB, 3, 5*time.Second)
	require.Equal(t, []urma.CRStatus{urma.CRSuccess, urma.CRSuccess, urma.CRLocLenErr},
		[]urma.CRStatus{recvs[0].Status, recvs[1].Status, recvs[2].Status}, "%v", recvs)
	sends := pollN(t, p.jfcA, 3, 5*time.Second)
	require.Equal(t, []urma.CRStatus{urma.CRSuccess, urma.CRSuccess, urma.CRRemOperationErr},
		[]urma.CRStatus{sends[0].Status, sends[1].Status, sends[2].Status}, "%v", sends)
	require.Equal(t, uint64(2), sends[2].UserCtx)
	attr, err := p.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, urma.StateError, attr.State)
	flushed := make([]jetty.CR, 4)
	n, err := p.jfs.Flush(flushed)
	require.NoError(t, err)
	require.Equal(t, 2, n, "%v", flushed[:n])
	for i, cr := range flushed[:n] {
		require.Equal(t, urma.CRWRFlushErr, cr.Status, "%v", cr)
		require.Equal(t, uint64(3+i), cr.UserCtx)
	}
	time.Sleep(10 * time.Millisecond)
	k, err := p.jfcB.Poll(make([]jetty.CR, 4))
	require.NoError(t, err)
	require.Zero(t, k, "a message after the failure arrived")
	rattr, err := p.jfr.Query()
	require.NoError(t, err)
	require.Equal(t, 4, rattr.Outstanding, "receives after the failure were consumed")
	require.NotZero(t, loopback.InboxConsumed(p.jfr.Raw()), "no message went through the inbox")
}

// TestInboxReceiverClosed closes a JFR while a message waits in its inbox
// (nobody polled): the sender completes it with REM_ACCESS_ABORT_ERR, as a
// SEND to a closed JFR. (The first SEND goes the usual way.)
func TestInboxReceiverClosed(t *testing.T) {
	p := newPair(t)
	require.NoError(t, p.jfr.Recv(p.dst.SGE(0, 64), 1))
	require.NoError(t, p.jfr.Recv(p.dst.SGE(64, 64), 2))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(0, 8), 0, 1))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(0, 8), 0, 2))
	require.NoError(t, p.jfr.Close())
	crs := pollN(t, p.jfcA, 2, 5*time.Second)
	require.Equal(t, urma.CRSuccess, crs[0].Status, "%v", crs[0])
	require.Equal(t, urma.CRRemAccessAbortErr, crs[1].Status, "%v", crs[1])
	recvs := pollN(t, p.jfcB, 2, 5*time.Second)
	require.Equal(t, urma.CRSuccess, recvs[0].Status, "%v", recvs[0])
	require.Equal(t, urma.CRWRFlushErr, recvs[1].Status, "the receive was used: %v", recvs[1])
}

// TestInboxRearm arms the receiver's JFC while messages wait in the inbox
// (nobody polled): Rearm refuses, so its caller polls them, and a message
// left after a successful arm raises the event.
func TestInboxRearm(t *testing.T) {
	p := newPair(t)
	jfce, err := jetty.NewJFCE(p.b)
	require.NoError(t, err)
	rt := newRunTarget(t, p, 4, 0, jfce)
	rjfc, jfr, remote := rt.jfc, rt.jfr, rt.remote
	send := func(ctx uint64) jetty.WR {
		return jetty.WR{Opcode: urma.OpSend, UserCtx: ctx, To: remote, Local: []segment.SGE{p.src.SGE(0, 8)}}
	}
	require.NoError(t, p.jfs.Post([]jetty.WR{send(0)})) // the usual way: nothing else outstanding
	require.Len(t, pollN(t, rjfc, 1, 5*time.Second), 1)
	require.NoError(t, p.jfs.Post([]jetty.WR{send(1)})) // to the inbox: send(0) is not polled
	require.ErrorIs(t, rjfc.Rearm(false), urma.ErrAgain, "armed with a message waiting in the inbox")
	require.Len(t, pollN(t, rjfc, 1, 5*time.Second), 1)
	require.NotZero(t, loopback.InboxConsumed(jfr.Raw()), "no message went through the inbox")

	require.NoError(t, rjfc.Rearm(false))
	require.NoError(t, p.jfs.Post([]jetty.WR{send(2), send(3)}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, rjfc.Wait(ctx), "no event for the messages")
	require.Len(t, pollN(t, rjfc, 2, 5*time.Second), 2)
}
