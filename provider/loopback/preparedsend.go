package loopback

import (
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/internal/prefetch"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
)

// sendPrepared runs the prepared SEND or SEND_IMM p (its source resolved)
// the short way when nothing about it is unusual: the target's oldest
// receive is one buffer of mapped memory, large enough. It looks at that
// receive before it claims it, so that until the claim it has done
// nothing, and anything else (no receive, a receive it cannot take, a
// claim lost to another sender, a target that is not ready) returns false
// for deliver to handle as it handles every SEND, errors and RNR waits
// included. What it writes is what deliver writes for a SEND that
// succeeds; it skips deliver's lists and the provider.CR it builds.
func (q *sendq) sendPrepared(p *prepared, seq uint64) bool {
	v := p.rem.rq
	if enterRQ(v) != provider.CRSuccess {
		return false
	}
	defer leaveRQ(v)
	r := v.ring
	if provider.State(r.Meta(metaState).Load()) != provider.StateReady {
		return false
	}
	pos := atomic.LoadUint64(r.DeqPos())
	if atomic.LoadUint64(r.Seq(pos)) != pos+1 {
		return false
	}
	sges := v.sges(pos)
	if len(sges) != 1 {
		return false
	}
	b := &sges[0]
	n := uint32(len(p.local))
	ref := v.bufRef(b.handle, b.gen)
	if ref == nil || ref.mem == nil || b.length < n || ref.acquire() != provider.CRSuccess {
		return false
	}
	defer ref.release()
	var dst sg.Span
	userCtx := (*recvSlot)(r.Payload(pos)).userCtx
	// Read before the claim, as a run's receives are (see deliverRun): if
	// another sender claims the receive meanwhile, the CAS fails and what
	// was read is dropped.
	if !ref.span(b.addr, n, &dst) || !atomic.CompareAndSwapUint64(r.DeqPos(), pos, pos+1) {
		return false
	}
	prefetch.Write(unsafe.Pointer(r.Seq(pos + 1)))
	// Reserved before the copy, for deliver's reason (earlyRecordMax).
	rpos, reserved := v.jfc.ring.ReserveRecord()
	copy(dst.B, p.local)
	r.Release(pos)
	w := &p.wr[0]
	if reserved {
		v.jfc.notify(v.jfc.writeRecv(rpos, w, v, &p.sw, userCtx, n))
	} else {
		v.jfc.overflow()
	}
	q.complete(w, seq, p.rem, provider.CRSuccess, n)
	// Last, where little else is live: the check costs its load and
	// branch alone.
	v.noteTaken()
	return true
}
