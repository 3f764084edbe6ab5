package loopback

import (
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/internal/prefetch"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
)

// A run is a stretch of a post list made of SENDs to one receive queue,
// which Post delivers together: one claim of as many receives, one
// reservation of as many completion records at the target, one entry into
// the peer. Between its messages there is then no locked instruction, and
// that is the point. A locked instruction waits until every store before it
// is done, and a store to a line that the receiver's core holds is a
// cross-core round trip; one message at a time, the sender pays two such
// waits per message (the receive it releases and the record it writes),
// where a run lets the stores of all its messages travel together.
//
// A run takes only what cannot fail once its receives are claimed, because
// a claimed receive cannot be given back: single-buffer messages (inline or
// one SGE) into receives of at most one mapped buffer that is large enough.
// The first request that does not qualify ends the run, and Post runs it
// (and whatever error or RNR wait it meets) the usual way.

// maxRun is the most messages one run delivers.
const maxRun = 16

// runsOff turns runs off, for tests that compare with and without them.
var runsOff bool

// runMsg is one message of a run, resolved before its receive is claimed.
type runMsg struct {
	src, dst sg.Span
	userCtx  uint64 // of the receive
}

// runnable tells whether w may be part of a run.
func runnable(w *provider.WR) bool {
	return (w.Opcode == provider.OpSend || w.Opcode == provider.OpSendImm) &&
		(w.InlineBytes() || len(w.Local) <= 1)
}

// postRun delivers a run from the head of wrs if it can, and returns how
// many requests it took (0: none, Post goes on with the first one as
// usual). Its requests are accepted, executed and completed, in order.
func (q *sendq) postRun(wrs []provider.WR) int {
	if len(wrs) < 2 || len(q.pending) != 0 || q.state != provider.StateReady || runsOff {
		return 0
	}
	free := uint64(q.depth) - (q.head - q.loadCredited())
	limit := min(len(wrs), int(min(free, maxRun)))
	var rem *remote
	n := 0
	for ; n < limit; n++ {
		w := &wrs[n]
		if !runnable(w) {
			break
		}
		r, err := q.validate(w)
		if err != nil || (rem != nil && r != rem) {
			break
		}
		rem = r
	}
	if n < 2 || (rem.rq.inbox != nil && !inboxOff && inboxShaped(&wrs[0])) {
		// Small SENDs go to the queue's inbox.
		return 0
	}
	return q.deliverRun(wrs[:n], rem)
}

// deliverRun delivers the longest prefix of ws that has receives waiting
// and qualifies (see above), accepts and completes it, and returns its
// length.
func (q *sendq) deliverRun(ws []provider.WR, rem *remote) int {
	v := rem.rq
	if enterRQ(v) != provider.CRSuccess {
		return 0
	}
	defer leaveRQ(v)
	if provider.State(v.ring.Meta(metaState).Load()) != provider.StateReady {
		return 0
	}
	if q.run == nil {
		q.run = new([maxRun]runMsg)
	}
	r := v.ring
	pos := atomic.LoadUint64(r.DeqPos())
	for i := range ws {
		prefetch.Write(unsafe.Pointer(r.Seq(pos + uint64(i))))
	}
	n := 0
	for n < len(ws) {
		p := pos + uint64(n)
		// A receive is read before it is claimed: if another sender
		// claims it meanwhile, the claim below fails and what was read
		// is dropped.
		if atomic.LoadUint64(r.Seq(p)) != p+1 || !q.resolveRun(&q.run[n], &ws[n], v, p) {
			break
		}
		n++
	}
	if n == 0 || !atomic.CompareAndSwapUint64(r.DeqPos(), pos, pos+uint64(n)) {
		q.unpinRun(n)
		return 0
	}
	v.noteTaken()
	var sw inbox.Sender
	fillSender(&sw, q)
	first, reserved := v.jfc.ring.ReserveRecords(uint64(n))
	wake := false
	for i := 0; i < n; i++ {
		m, w := &q.run[i], &ws[i]
		copy(m.dst.B, m.src.B)
		r.Release(pos + uint64(i))
		if reserved {
			wake = v.jfc.writeRecv(first+uint64(i), w, v, &sw, m.userCtx, uint32(m.src.N)) || wake
		} else {
			// Too little room for the run's records at once: each takes
			// its chance alone, and those that find none overflow the
			// JFC, as a single delivery's would.
			var cr provider.CR
			q.recvRecordBase(&cr, v.id)
			cr.UserCtx, cr.Len = m.userCtx, uint32(m.src.N)
			recvRecord(&cr, w, v)
			v.jfc.push(&cr, 0)
		}
	}
	if reserved {
		v.jfc.notify(wake)
	}
	for i := 0; i < n; i++ {
		q.head++
		q.complete(&ws[i], q.head, rem, provider.CRSuccess, uint32(q.run[i].src.N))
	}
	q.unpinRun(n)
	return n
}

// resolveRun fills m with the source of w and the buffer of the receive at
// p, pinned, if the message qualifies for a run and will fit.
func (q *sendq) resolveRun(m *runMsg, w *provider.WR, v *rqView, p uint64) bool {
	sges := v.sges(p)
	if len(sges) > 1 {
		return false
	}
	m.src, m.dst = sg.Span{}, sg.Span{}
	switch {
	case w.InlineBytes():
		m.src.B, m.src.N = w.Inline, uint64(len(w.Inline))
	case len(w.Local) == 1:
		// A local segment is memory of this process: its span is mapped.
		if !localSpan(&w.Local[0], &m.src) {
			return false
		}
	}
	if len(sges) == 1 {
		b := &sges[0]
		ref := v.bufRef(b.handle, b.gen)
		if ref == nil || ref.acquire() != provider.CRSuccess {
			releaseSpan(&m.src)
			return false
		}
		if !ref.span(b.addr, b.length, &m.dst) || m.dst.Remote() {
			// Out of range or unmapped: let go of ref itself, and
			// forget the span so that nothing releases it again.
			m.dst = sg.Span{}
			ref.release()
			releaseSpan(&m.src)
			return false
		}
	}
	if m.src.N > m.dst.N {
		releaseSpan(&m.dst)
		releaseSpan(&m.src)
		return false
	}
	m.userCtx = (*recvSlot)(v.ring.Payload(p)).userCtx
	return true
}

// releaseSpan lets go of what a span of a run holds: the access to its
// source segment or its receive buffer, if counted (see memRef.span).
func releaseSpan(s *sg.Span) {
	if s.Held != nil {
		s.Held.Add(-1)
	}
}

// unpinRun lets go of the first n messages' spans and forgets them, so that
// the sendq holds no caller memory alive.
func (q *sendq) unpinRun(n int) {
	for i := 0; i < n; i++ {
		m := &q.run[i]
		releaseSpan(&m.dst)
		releaseSpan(&m.src)
		*m = runMsg{}
	}
}
