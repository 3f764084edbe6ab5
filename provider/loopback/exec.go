package loopback

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/internal/prefetch"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
)

// local resolves the request's local SGEs (or inline data); false means a
// local protection error.
func (q *sendq) local(w *provider.WR, l *sg.List) bool {
	if w.InlineBytes() {
		l.AddBytes(w.Inline)
		return true
	}
	for i := range w.Local {
		if !localSpan(&w.Local[i], l.Next()) {
			l.Release()
			return false
		}
		l.Grow()
	}
	return true
}

// localSpan acquires the range a local SGE names into s; false means a
// local protection error.
func localSpan(sg *provider.SGE, s *sg.Span) bool {
	seg := asSegment(sg.Seg)
	if seg == nil || seg.ref.acquire() != provider.CRSuccess {
		return false
	}
	if !seg.ref.span(sg.Addr, sg.Len, s) {
		seg.ref.release()
		return false
	}
	return true
}

// earlyRecordMax is the largest message whose receive record deliver
// reserves before copying it.
const earlyRecordMax = 4096

// recvRecordBase makes cr a successful receive-side record of the queue
// localID for a message from q. It stores field by field: a composite
// literal with a returned JettyID is built in temporaries and copied in
// wide loads that stall on the narrow stores that built them.
func (q *sendq) recvRecordBase(cr *provider.CR, localID uint32) {
	*cr = provider.CR{}
	cr.Status, cr.LocalID = provider.CRSuccess, localID
	cr.RemoteID.EID, cr.RemoteID.UASID, cr.RemoteID.ID = q.ctx.eid, q.ctx.uasid, q.id
}

// recvRecord fills in what a receive's record says of the request w that
// consumed it: its opcode, flags and immediate data.
func recvRecord(cr *provider.CR, w *provider.WR, v *rqView) {
	flags, imm := recvFlags(w, v)
	cr.Opcode, _ = provider.CROpcodeOf(w.Opcode)
	cr.Flags, cr.Imm = flags, imm
}

// recvFlags returns the flags and immediate data of the record of a
// receive of v that the request w consumed.
func recvFlags(w *provider.WR, v *rqView) (provider.CRFlags, uint64) {
	return recvFlagsOf(w.Opcode, w.Flags&provider.FlagSolicited != 0, w.Imm, v)
}

// recvFlagsOf is recvFlags for a message known by its opcode, whether it
// was solicited and its immediate data.
func recvFlagsOf(op provider.Opcode, solicited bool, imm uint64, v *rqView) (provider.CRFlags, uint64) {
	flags := provider.CRFlagRecv | v.crFlags
	if solicited {
		flags |= provider.CRFlagSolicited
	}
	if op == provider.OpSend {
		return flags, 0
	}
	return flags | provider.CRFlagImm, imm
}

// remoteSpan acquires the remote range into s if the segment grants need,
// and returns the reference it acquired, which the caller releases; on
// failure it returns the status the request completes with.
func remoteSpan(sg *provider.SGE, n uint32, need provider.Access, s *sg.Span) (*memRef, provider.CRStatus) {
	t := asTarget(sg.Seg)
	if t == nil || t.closed.Load() || t.ref.access&need != need {
		return nil, provider.CRRemAccessAbortErr
	}
	if st := t.ref.acquire(); st != provider.CRSuccess {
		return nil, st
	}
	if !t.ref.span(sg.Addr, n, s) {
		t.ref.release()
		return nil, provider.CRRemAccessAbortErr
	}
	return &t.ref, provider.CRSuccess
}

// exec runs one request and completes it. It returns true when the request
// must wait for a receive at its target (RNR) and has done nothing.
func (q *sendq) exec(w *provider.WR, seq uint64, rem *remote) (rnr bool) {
	if w.Opcode == provider.OpNOP {
		q.complete(w, seq, nil, provider.CRSuccess, 0)
		return false
	}
	l := &q.sg[0]
	if !q.local(w, l) {
		q.fail(w, seq, rem, provider.CRLocAccessErr)
		return false
	}
	// No defers on this path: it runs once per request, and a function
	// with this many returns would not get the compiler's cheap ones.
	rnr = q.execWith(w, seq, rem, l)
	l.Release()
	return rnr
}

// execWith is exec once the local SGEs are held in l.
func (q *sendq) execWith(w *provider.WR, seq uint64, rem *remote, l *sg.List) (rnr bool) {
	switch w.Opcode {
	case provider.OpSend, provider.OpSendImm, provider.OpSendInvalidate:
		return q.deliver(w, seq, rem, l, nil, nil)
	}
	if st := rem.rq.ready(); st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return false
	}
	// The remote range goes straight into the queue's second list, where
	// sg.Place and sg.Copy take it.
	r := &q.sg[1]
	dst := r.At(0)
	switch w.Opcode {
	case provider.OpWrite, provider.OpWriteImm:
		ref, st := remoteSpan(&w.Remote, uint32(l.Total()), provider.AccessWrite, dst)
		if st != provider.CRSuccess {
			q.fail(w, seq, rem, st)
			return false
		}
		r.Reset()
		r.Grow()
		if w.Opcode == provider.OpWriteImm {
			rnr = q.deliver(w, seq, rem, l, dst, ref)
			ref.release()
			return rnr
		}
		n, err := sg.Place(r, l)
		if err != nil {
			st = ref.lossStatus()
		}
		ref.release()
		if err != nil {
			q.fail(w, seq, rem, st)
			return false
		}
		q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
		return false
	case provider.OpWriteNotify:
		q.writeNotify(w, seq, rem, l)
		return false
	case provider.OpRead:
		ref, st := remoteSpan(&w.Remote, uint32(l.Total()), provider.AccessRead, dst)
		if st != provider.CRSuccess {
			q.fail(w, seq, rem, st)
			return false
		}
		r.Reset()
		r.Grow()
		n, err := sg.Copy(l, r)
		ref.release()
		if err != nil {
			q.fail(w, seq, rem, ref.lossStatus())
			return false
		}
		q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
		return false
	}
	// Atomics (validate admitted nothing else, and only on mapped memory).
	ref, st := remoteSpan(&w.Remote, 8, provider.AccessAtomic, dst)
	if st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return false
	}
	old := atomicOp(w, (*uint64)(unsafe.Pointer(&dst.B[0])))
	ref.release()
	binary.NativeEndian.PutUint64(l.At(0).B, old)
	q.complete(w, seq, rem, provider.CRSuccess, 8)
	return false
}

func atomicOp(w *provider.WR, p *uint64) uint64 {
	switch w.Opcode {
	case provider.OpCAS:
		for {
			old := atomic.LoadUint64(p)
			if old != w.Compare || atomic.CompareAndSwapUint64(p, old, w.Operand) {
				return old
			}
		}
	case provider.OpSwap:
		return atomic.SwapUint64(p, w.Operand)
	case provider.OpFAdd:
		return atomic.AddUint64(p, w.Operand) - w.Operand
	case provider.OpFSub:
		return atomic.AddUint64(p, -w.Operand) + w.Operand
	case provider.OpFAnd:
		return atomic.AndUint64(p, w.Operand)
	case provider.OpFOr:
		return atomic.OrUint64(p, w.Operand)
	}
	for { // FXOR
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, old^w.Operand) {
			return old
		}
	}
}

// lossStatus is the status of an access that failed midway: the peer's
// loss if its process went away, a remote access error otherwise.
func (r *memRef) lossStatus() provider.CRStatus {
	if r.peer != nil {
		if st := r.peer.lossStatus(); st != provider.CRSuccess {
			return st
		}
	}
	return provider.CRRemAccessAbortErr
}

// ready is what a one-sided request to v completes with if v cannot take
// it: REM_ACCESS_ABORT_ERR while the JFR or Jetty is closed or not READY,
// the peer's loss status if its process is gone. A one-sided request
// names its JFR or Jetty as a SEND does, and on verbs travels on a
// connection to it that its Close or ERROR ends.
func (v *rqView) ready() provider.CRStatus {
	// A READY queue of this process inline; the rest out of line.
	if v.local != nil && provider.State(v.local.st.Load()) == provider.StateReady {
		return provider.CRSuccess
	}
	return v.readySlow()
}

func (v *rqView) readySlow() provider.CRStatus {
	var s uint32
	if v.local != nil {
		s = v.local.st.Load()
	} else {
		if st := v.peer.usable(); st != provider.CRSuccess {
			return st
		}
		s = v.ring.Meta(metaState).Load()
	}
	if provider.State(s) != provider.StateReady {
		return provider.CRRemAccessAbortErr
	}
	return provider.CRSuccess
}

// enterRQ brackets a delivery into v so that its memory stays mapped: a
// queue of this process counts its senders, a peer's needs only to be
// usable (see peerConn.usable).
func enterRQ(v *rqView) provider.CRStatus {
	if v.local != nil {
		if !v.local.enter() {
			return provider.CRRemAccessAbortErr
		}
		return provider.CRSuccess
	}
	return v.peer.usable()
}

func leaveRQ(v *rqView) {
	if v.local != nil {
		v.local.leave()
	}
}

// deliver consumes a receive at the target for SEND, SEND_IMM and
// WRITE_IMM. For WRITE_IMM, dst is the remote range the data goes to,
// acquired through dref, and the receive only carries the immediate.
func (q *sendq) deliver(w *provider.WR, seq uint64, rem *remote, src *sg.List, dst *sg.Span, dref *memRef) (rnr bool) {
	v := rem.rq
	if st := enterRQ(v); st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return false
	}
	defer leaveRQ(v)
	if provider.State(v.ring.Meta(metaState).Load()) != provider.StateReady {
		q.fail(w, seq, rem, provider.CRRemAccessAbortErr)
		return false
	}
	pos, ok := v.ring.Claim()
	if !ok {
		if v.local != nil {
			v.local.addWaiter(q)
		}
		// A receive posted between claim and addWaiter would not kick us,
		// nor would one posted by another process; the RNR timer covers
		// both.
		return true
	}
	v.noteTaken()
	slot := (*recvSlot)(v.ring.Payload(pos))
	// The next message claims the next receive and must read it before
	// it can copy anything: ask for its line now, while this one copies.
	// The receiver posted it long before, unless the ring runs near
	// empty. For writing, as the release will write it: a line read
	// first is asked for twice.
	prefetch.Write(unsafe.Pointer(v.ring.Seq(pos + 1)))
	var cr provider.CR
	q.recvRecordBase(&cr, v.id)
	cr.UserCtx = slot.userCtx
	recvRecord(&cr, w, v)
	inv := provider.CRSuccess
	if w.Opcode == provider.OpSendInvalidate {
		inv = invalidateFor(&cr, w, v)
	}
	// A small message's record slot is reserved before its data moves:
	// the reservation is an atomic, which after the copy would first wait
	// for the data's lines to reach the receiver's core, and the record's
	// lines would be asked for only then. A big one reserves after: a
	// reserved slot holds back the JFC's later records until published.
	early := src.Total() <= earlyRecordMax
	var rpos uint64
	var reserved bool
	if early {
		rpos, reserved = v.jfc.ring.ReserveRecord()
	}
	var n uint64
	st := provider.CRSuccess
	if dst != nil {
		var err error
		if n, err = sg.Place(q.sg[1].Only(*dst), src); err != nil {
			cr.Status, st = provider.CRLocAccessErr, dref.lossStatus()
		}
	} else {
		r := &q.sg[1]
		switch {
		case inv != provider.CRSuccess:
			// The segment was not invalidated: the receive says so
			// rather than deliver what it was to follow.
			cr.Status, st = provider.CRLocAccessErr, inv
		case v.recvBuffers(pos, r) != provider.CRSuccess:
			cr.Status, st = provider.CRLocAccessErr, provider.CRRemOperationErr
		case src.Total() > r.Total():
			cr.Status, st = provider.CRLocLenErr, provider.CRRemOperationErr
		default:
			var err error
			if n, err = sg.Copy(r, src); err != nil {
				cr.Status, st = provider.CRLocAccessErr, provider.CRRemOperationErr
			}
			cr.Len = uint32(n)
		}
	}
	// The buffers are let go after the record is out: letting go is an
	// atomic add, which would first wait for the data's cache lines.
	v.ring.Release(pos)
	if !early {
		rpos, reserved = v.jfc.ring.ReserveRecord()
	}
	v.jfc.pushReserved(rpos, reserved, &cr, 0)
	if dst == nil {
		q.sg[1].Release()
	}
	if st != provider.CRSuccess && v.peer != nil {
		// A receive buffer the peer could not describe any more because its
		// process went away is the peer's loss, not a bad buffer.
		if lost := v.peer.lossStatus(); lost != provider.CRSuccess {
			st = lost
		}
	}
	if st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return false
	}
	q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
	return false
}

// bufRef resolves a receive buffer named by handle and generation.
func (v *rqView) bufRef(h, gen uint32) *memRef {
	if v.local != nil {
		if s := v.local.ctx.segByHandle(h, gen); s != nil {
			return &s.ref
		}
		return nil
	}
	return v.peer.bufRef(h, gen)
}
