package loopback

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// span is a piece of memory taken for the duration of one request, with the
// segment it was acquired from (nil for inline data).
type span struct {
	b   []byte
	seg *segment
}

// sgList is a scatter/gather list resolved to memory. It lives on the stack
// of exec, so the data path does not allocate.
type sgList struct {
	s [maxSGE]span
	n int
}

func (l *sgList) add(b []byte, seg *segment) { l.s[l.n] = span{b, seg}; l.n++ }

func (l *sgList) release() {
	for i := 0; i < l.n; i++ {
		if l.s[i].seg != nil {
			l.s[i].seg.release()
		}
	}
	l.n = 0
}

func (l *sgList) total() uint64 {
	var t uint64
	for i := 0; i < l.n; i++ {
		t += uint64(len(l.s[i].b))
	}
	return t
}

// copySG copies src into dst piece by piece and returns the bytes copied.
func copySG(dst, src *sgList) uint64 {
	var n uint64
	di, doff := 0, 0
	for si := 0; si < src.n; si++ {
		b := src.s[si].b
		for len(b) > 0 && di < dst.n {
			c := copy(dst.s[di].b[doff:], b)
			b, doff, n = b[c:], doff+c, n+uint64(c)
			if doff == len(dst.s[di].b) {
				di, doff = di+1, 0
			}
		}
	}
	return n
}

// local resolves the request's local SGEs (or inline data); false means a
// local protection error.
func (q *sendq) local(w *provider.WR, l *sgList) bool {
	if w.Flags&provider.FlagInline != 0 {
		l.add(w.Inline, nil)
		return true
	}
	for i := range w.Local {
		sg := &w.Local[i]
		seg, _ := provider.RawMem(sg.Seg).(*segment)
		if seg == nil || !seg.acquire() {
			l.release()
			return false
		}
		b, ok := seg.span(sg.Addr, sg.Len)
		if !ok {
			seg.release()
			l.release()
			return false
		}
		l.add(b, seg)
	}
	return true
}

// remoteSpan acquires the remote range if the segment grants need.
func remoteSpan(sg *provider.SGE, n uint32, need provider.Access) (span, bool) {
	t, _ := provider.RawMem(sg.Seg).(*target)
	if t == nil || t.closed.Load() {
		return span{}, false
	}
	seg := t.seg
	if seg.desc.Access&need != need || !seg.acquire() {
		return span{}, false
	}
	b, ok := seg.span(sg.Addr, n)
	if !ok {
		seg.release()
		return span{}, false
	}
	return span{b, seg}, true
}

// exec runs one request and completes it. It returns true when the request
// must wait for a receive at its target (RNR) and has done nothing.
func (q *sendq) exec(w *provider.WR, seq uint64, rem *remote) (rnr bool) {
	var l sgList
	switch w.Opcode {
	case provider.OpNOP:
		q.complete(w, seq, nil, provider.CRSuccess, 0)
		return false
	case provider.OpSend, provider.OpSendImm:
		if !q.local(w, &l) {
			q.fail(w, seq, rem, provider.CRLocAccessErr)
			return false
		}
		defer l.release()
		return q.deliver(w, seq, rem, &l, nil)
	case provider.OpWrite, provider.OpWriteImm:
		if !q.local(w, &l) {
			q.fail(w, seq, rem, provider.CRLocAccessErr)
			return false
		}
		defer l.release()
		dst, ok := remoteSpan(&w.Remote, uint32(l.total()), provider.AccessWrite)
		if !ok {
			q.fail(w, seq, rem, provider.CRRemAccessAbortErr)
			return false
		}
		defer dst.seg.release()
		if w.Opcode == provider.OpWriteImm {
			return q.deliver(w, seq, rem, &l, &dst)
		}
		var d sgList
		d.s[0], d.n = span{dst.b, nil}, 1
		n := copySG(&d, &l)
		q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
		return false
	case provider.OpRead:
		if !q.local(w, &l) {
			q.fail(w, seq, rem, provider.CRLocAccessErr)
			return false
		}
		defer l.release()
		src, ok := remoteSpan(&w.Remote, uint32(l.total()), provider.AccessRead)
		if !ok {
			q.fail(w, seq, rem, provider.CRRemAccessAbortErr)
			return false
		}
		var s sgList
		s.s[0], s.n = span{src.b, nil}, 1
		n := copySG(&l, &s)
		src.seg.release()
		q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
		return false
	}
	// Atomics (validate admitted nothing else).
	if !q.local(w, &l) {
		q.fail(w, seq, rem, provider.CRLocAccessErr)
		return false
	}
	defer l.release()
	dst, ok := remoteSpan(&w.Remote, 8, provider.AccessAtomic)
	if !ok {
		q.fail(w, seq, rem, provider.CRRemAccessAbortErr)
		return false
	}
	old := atomicOp(w, (*uint64)(unsafe.Pointer(&dst.b[0])))
	dst.seg.release()
	binary.NativeEndian.PutUint64(l.s[0].b, old)
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

// deliver consumes a receive at the target for SEND, SEND_IMM and
// WRITE_IMM. For WRITE_IMM, dst is the remote range the data goes to and the
// receive only carries the immediate.
func (q *sendq) deliver(w *provider.WR, seq uint64, rem *remote, src *sgList, dst *span) (rnr bool) {
	rq := rem.ep.rq
	if rq.closed.Load() || provider.State(rq.state.Load()) != provider.StateReady {
		q.fail(w, seq, rem, provider.CRRemAccessAbortErr)
		return false
	}
	pos, ok := rq.ring.claim()
	if !ok {
		rq.addWaiter(q)
		// A receive posted between claim and addWaiter would not kick us;
		// the RNR timer covers that window.
		return true
	}
	slot := (*recvSlot)(rq.ring.payload(pos))
	cr := provider.CR{Status: provider.CRSuccess, Opcode: w.Opcode, Flags: provider.CRFlagRecv | rq.crFlags,
		UserCtx: slot.userCtx, LocalID: rq.id, RemoteID: q.ctx.jettyID(q.id)}
	if w.Flags&provider.FlagSolicited != 0 {
		cr.Flags |= provider.CRFlagSolicited
	}
	if w.Opcode != provider.OpSend {
		cr.Flags |= provider.CRFlagImm
		cr.Imm = w.Imm
	}
	var n uint64
	st := provider.CRSuccess
	if dst != nil {
		var d sgList
		d.s[0], d.n = span{dst.b, nil}, 1
		n = copySG(&d, src)
	} else {
		var r sgList
		ok := true
		for _, sg := range rq.sges(pos) {
			seg := rq.ctx.segByHandle(sg.handle)
			if seg == nil || !seg.acquire() {
				ok = false
				break
			}
			b, in := seg.span(sg.addr, sg.length)
			if !in {
				seg.release()
				ok = false
				break
			}
			r.add(b, seg)
		}
		switch {
		case !ok:
			cr.Status, st = provider.CRLocAccessErr, provider.CRRemOperationErr
		case src.total() > r.total():
			cr.Status, st = provider.CRLocLenErr, provider.CRRemOperationErr
		default:
			n = copySG(&r, src)
			cr.Len = uint32(n)
		}
		r.release()
	}
	rq.ring.release(pos)
	rq.jfc.push(&cr, 0, 0)
	if st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return false
	}
	q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
	return false
}
