package loopback

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/spin"
)

// rqInbox is the inbox of a receive queue of this process (see
// docs/send-delivery.md): the cells senders of this process leave small
// SENDs in, the routes that name those senders, and the consumer lock. The
// queue delivers the messages itself, when its JFC is polled, when
// receives are posted, or when a sender that waited long enough helps.
type rqInbox struct {
	box *inbox
	// held is the consumer lock: whoever delivers holds it, so messages
	// are delivered in the order they were left and each once.
	held atomic.Uint32
	// refs counts the queue and each route held: a sender that holds a
	// route reads deq and its failure word after the queue is gone.
	refs atomic.Int32
	// active counts the receiver's polls and posts of receives, alone on
	// its line: a sender whose messages wait while it stands still helps
	// at once (one thread that sends, then polls its own JFC first).
	_      [64]byte
	active atomic.Uint64
	_      [56]byte

	mu     sync.Mutex // guards the routes' owners and closed
	closed bool       // the queue is going: no route is given any more
	routes [inboxRoutes]inboxRoute
}

// inboxRoutes is how many send queues one inbox serves at once; a queue
// that finds none free sends the usual way.
const inboxRoutes = 64

// inboxRoute is a send queue's entry in an inbox's table: it names the
// sender in the receive records, and tells the sender how delivery went.
type inboxRoute struct {
	owner *sendq // under rqInbox.mu; nil when free
	sw    senderWords
	// failAt is one past the position of the route's message whose
	// delivery failed, and failSt its status for the sender; the route's
	// later messages are not delivered. 0: none failed.
	failAt atomic.Uint64
	failSt atomic.Uint32
	// skipBelow is where the route's messages start to count: those
	// before it were taken back by their sender (see withdrawInbox).
	skipBelow atomic.Uint64
	_         [64]byte // senders read their route, deliverers every route
}

// inboxCellsFor is the size of the inbox of a receive queue of depth
// receives: room for two one-cell messages per receive, as a sender may
// run ahead of the receiver by a window of messages.
func inboxCellsFor(depth int) int { return min(max(2*depth, 64), 1<<14) }

func newRQInbox(depth int) (*rqInbox, error) {
	b, err := newInbox("inbox", inboxCellsFor(depth))
	if err != nil {
		return nil, err
	}
	ib := &rqInbox{box: b}
	ib.refs.Store(1)
	trackInbox(ib)
	return ib, nil
}

// unref drops a reference; the last one unmaps the inbox.
func (ib *rqInbox) unref() {
	if ib.refs.Add(-1) == 0 {
		untrackInbox(ib)
		ib.box.close()
	}
}

// bump counts a sign of the receiver's life. One writer in the common case,
// so no locked instruction: a lost count among racing pollers changes
// nothing a sender concludes.
func (ib *rqInbox) bump() { ib.active.Store(ib.active.Load() + 1) }

// tryLock takes the consumer lock if it is free.
func (ib *rqInbox) tryLock() bool { return ib.held.Load() == 0 && ib.held.CompareAndSwap(0, 1) }

// lock takes the consumer lock, waiting for its holder, who delivers a
// bounded number of messages.
func (ib *rqInbox) lock() {
	var w spin.Wait
	for !ib.tryLock() {
		w.Idle()
		runtime.Gosched()
	}
}

func (ib *rqInbox) unlock() { ib.held.Store(0) }

// waiting tells whether a message is published at the head of the inbox.
// It reads the head cell's sequence word, not enq: every post writes enq,
// and a receiver that read it on every poll would take its line from the
// sender each time.
func (ib *rqInbox) waiting() bool {
	r := ib.box.r
	pos := atomic.LoadUint64(r.deq)
	return atomic.LoadUint64(r.seq(pos)) == pos+1
}

// takeRoute gives q a free route, naming it; false when none is free.
func (ib *rqInbox) takeRoute(q *sendq) (uint16, bool) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if ib.closed {
		return 0, false
	}
	for i := range ib.routes {
		rt := &ib.routes[i]
		if rt.owner != nil {
			continue
		}
		rt.owner = q
		rt.sw.fill(q)
		// Messages of the route's last owner, if any were left, were
		// all taken back: none is delivered as this one's.
		rt.skipBelow.Store(atomic.LoadUint64(ib.box.r.enq))
		rt.failAt.Store(0)
		ib.refs.Add(1)
		return uint16(i), true
	}
	return 0, false
}

// dropRoute frees a route whose owner has no message left in the inbox.
func (ib *rqInbox) dropRoute(route uint16) {
	ib.mu.Lock()
	ib.routes[route].owner = nil
	ib.mu.Unlock()
	ib.unref()
}

// inboxBatch is the most messages a poll or a post of receives delivers
// at once; a helping sender delivers up to its own.
const inboxBatch = 64

// tryDeliver delivers up to max waiting messages unless another party is
// delivering them.
func (q *recvq) tryDeliver(max int) {
	ib := q.inbox
	if !ib.waiting() || !ib.tryLock() {
		return
	}
	q.deliverLocked(max, ^uint64(0))
	ib.unlock()
}

// deliverLocked delivers the inbox's messages in order, up to max of them
// and up to position until, under the consumer lock. It returns whether it
// stopped at a message that no receive was posted for (RNR): that message
// stays first in the inbox.
func (q *recvq) deliverLocked(max int, until uint64) (rnr bool) {
	ib := q.inbox
	b := ib.box
	pos := b.head()
	var e inboxEntry
	for n := 0; n < max && pos < until && b.peek(pos, &e); n++ {
		if int(e.hdr.route) < len(ib.routes) {
			rt := &ib.routes[e.hdr.route]
			if pos >= rt.skipBelow.Load() && rt.failAt.Load() == 0 {
				st, wait := q.deliverEntry(&e, rt)
				if wait {
					rnr = true
					break
				}
				if st != provider.CRSuccess {
					// Stored before deq moves past the message: a
					// sender that sees it delivered sees this.
					rt.failSt.Store(uint32(st))
					rt.failAt.Store(pos + 1)
				}
			}
		}
		pos += e.cells
	}
	b.consume(pos)
	return rnr
}

// deliverEntry delivers the message e into the queue's oldest receive and
// writes its receive record, what deliver does for a SEND from another
// queue's core. It returns the status the sender completes with, or rnr
// when no receive is posted.
func (q *recvq) deliverEntry(e *inboxEntry, rt *inboxRoute) (provider.CRStatus, bool) {
	if provider.State(q.st.Load()) != provider.StateReady {
		return provider.CRRemAccessAbortErr, false
	}
	v := &q.view
	pos, ok := q.ring.claim()
	if !ok {
		return provider.CRSuccess, true
	}
	userCtx := (*recvSlot)(q.ring.payload(pos)).userCtx
	n := e.hdr.len
	if q.copyEntry(e, pos) {
		q.ring.release(pos)
		rpos, reserved := v.jfc.ring.reserveRecord()
		if !reserved {
			v.jfc.overflow()
			return provider.CRSuccess, false
		}
		solicited := e.hdr.flags&inboxSolicited != 0
		urgent := v.jfc.writeRecvOf(rpos, provider.Opcode(e.hdr.opcode), solicited, e.imm, v, &rt.sw, userCtx, n)
		v.jfc.notify(urgent)
		return provider.CRSuccess, false
	}
	// The slow way, for several buffers, memory of another process and
	// every failure: deliver's lists.
	var r sgList
	st := v.recvBuffers(pos, &r)
	var cr provider.CR
	cr.Status, cr.Opcode, cr.UserCtx, cr.LocalID = provider.CRSuccess, provider.Opcode(e.hdr.opcode), userCtx, q.id
	cr.Flags, cr.Imm = recvFlagsOf(cr.Opcode, e.hdr.flags&inboxSolicited != 0, e.imm, v)
	cr.RemoteID = rt.sw.jettyID()
	sender := provider.CRSuccess
	switch {
	case st != provider.CRSuccess:
		cr.Status, sender = provider.CRLocAccessErr, provider.CRRemOperationErr
	case uint64(n) > r.total():
		cr.Status, sender = provider.CRLocLenErr, provider.CRRemOperationErr
	default:
		var buf [inboxMaxData]byte
		data := buf[:q.inbox.box.copyOut(e, buf[:])]
		var src sgList
		src.addBytes(data)
		m, err := copySG(&r, &src)
		if err != nil {
			cr.Status, sender = provider.CRLocAccessErr, provider.CRRemOperationErr
		}
		cr.Len = uint32(m)
	}
	r.release()
	q.ring.release(pos)
	v.jfc.push(&cr, 0)
	return sender, false
}

// copyEntry copies the message e into the receive at pos the short way,
// when the receive is one buffer of memory this process maps, large
// enough; false when it is not, and nothing was copied.
func (q *recvq) copyEntry(e *inboxEntry, pos uint64) bool {
	v := &q.view
	sges := v.sges(pos)
	if len(sges) != 1 {
		return false
	}
	sg := &sges[0]
	ref := v.bufRef(sg.handle, sg.gen)
	if ref == nil || ref.mem == nil || sg.length < e.hdr.len || ref.acquire() != provider.CRSuccess {
		return false
	}
	var dst span
	ok := ref.span(sg.addr, e.hdr.len, &dst)
	if ok {
		q.inbox.box.copyOut(e, dst.b)
	}
	ref.release()
	return ok
}

// recvBuffers acquires the buffers of the receive at pos into r; on
// failure r holds nothing and the status says why.
func (v *rqView) recvBuffers(pos uint64, r *sgList) provider.CRStatus {
	r.n = 0
	for _, sg := range v.sges(pos) {
		ref := v.bufRef(sg.handle, sg.gen)
		if ref == nil || ref.acquire() != provider.CRSuccess {
			r.release()
			r.n = 0
			return provider.CRLocAccessErr
		}
		if !ref.span(sg.addr, sg.length, &r.s[r.n]) {
			ref.release()
			r.release()
			r.n = 0
			return provider.CRLocAccessErr
		}
		r.n++
	}
	return provider.CRSuccess
}

// failInbox ends the messages left in the inbox of a queue that is going
// away (closed is set): their senders complete them with
// REM_ACCESS_ABORT_ERR, as a SEND to a closed queue does.
func (q *recvq) failInbox() {
	ib := q.inbox
	// Senders leave messages under their queue's lock once they saw the
	// queue open (postInbox): after each route owner's lock was taken
	// once, none is left half written, and none comes after.
	ib.mu.Lock()
	ib.closed = true
	var owners []*sendq
	for i := range ib.routes {
		if o := ib.routes[i].owner; o != nil {
			owners = append(owners, o)
		}
	}
	ib.mu.Unlock()
	quiesce(owners)
	ib.lock()
	b := ib.box
	pos := b.head()
	var e inboxEntry
	for b.peek(pos, &e) {
		if int(e.hdr.route) < len(ib.routes) {
			rt := &ib.routes[e.hdr.route]
			if pos >= rt.skipBelow.Load() && rt.failAt.Load() == 0 {
				rt.failSt.Store(uint32(provider.CRRemAccessAbortErr))
				rt.failAt.Store(pos + 1)
			}
		}
		pos += e.cells
	}
	b.consume(pos)
	ib.unlock()
}

// inboxSolicited is the header flag of a message sent FlagSolicited.
const inboxSolicited = 1

// queueList is a list of queues that a JFC's polls walk without a lock:
// changed by copying, under mu.
type queueList[T comparable] struct {
	mu sync.Mutex
	p  atomic.Pointer[[]T]
}

func (l *queueList[T]) load() []T {
	if p := l.p.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *queueList[T]) add(x T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := append(append([]T(nil), l.load()...), x)
	l.p.Store(&s)
}

func (l *queueList[T]) remove(x T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []T
	for _, y := range l.load() {
		if y != x {
			s = append(s, y)
		}
	}
	l.p.Store(&s)
}

// pollDeliver is a JFC poll's delivery of the queue's inbox: inside
// posting, so that a Close waits before it unmaps what this reads.
func (q *recvq) pollDeliver() {
	q.inbox.bump()
	if !q.inbox.waiting() || !q.posting.enter(&q.closed) {
		return
	}
	q.tryDeliver(inboxBatch)
	q.posting.leave()
}

// deliverable tells whether the inbox holds messages that receives were
// posted for, which a poll would deliver.
func (q *recvq) deliverable() bool {
	if !q.posting.enter(&q.closed) {
		return false
	}
	defer q.posting.leave()
	return q.inbox.waiting() && q.ring.count() > 0
}
