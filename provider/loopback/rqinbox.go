package loopback

import (
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
)

// rqInbox is the inbox of a receive queue (see docs/architecture.md) as
// one process sees it: the cells senders leave small SENDs in, the routes
// that name those senders, and the consumer lock, all in one shared
// mapping. The queue's own process delivers the messages when its JFC is
// polled or armed; a sender, in any process, delivers them when the
// receiver stands still.
type rqInbox struct {
	box    *inbox.Inbox
	routes *[inbox.Routes]inbox.Route
	// local is set in the queue's own process, where the inbox is
	// unmapped once the queue and every route held by a sender of the
	// process are gone (refs). A peer's inbox stays mapped until its
	// link's teardown.
	local bool
	refs  atomic.Int32

	mu     sync.Mutex // guards closed and owners
	closed bool       // the queue is going: no route is given any more
	// owners are the send queues of this process holding a route, which
	// a Close of the queue waits out (see failInbox).
	owners [inbox.Routes]*sendq
}

// inboxCellsFor is the size of the inbox of a receive queue of depth
// receives: room for two one-cell messages per receive, as a sender may
// run ahead of the receiver by a window of messages.
func inboxCellsFor(depth int) int { return min(max(2*depth, 64), 1<<14) }

func newRQInbox(depth int) (*rqInbox, error) {
	b, err := inbox.New("inbox", inboxCellsFor(depth))
	if err != nil {
		return nil, err
	}
	ib := &rqInbox{box: b, routes: b.Routes(), local: true}
	ib.refs.Store(1)
	trackInbox(ib)
	return ib, nil
}

// attachRQInbox maps the inbox of a peer's queue, passed as fd.
func attachRQInbox(fd int, cells int) (*rqInbox, error) {
	b, err := inbox.Attach(fd, cells)
	if err != nil {
		return nil, err
	}
	return &rqInbox{box: b, routes: b.Routes()}, nil
}

// unref drops a reference to a local inbox; the last one unmaps it.
func (ib *rqInbox) unref() {
	if ib.refs.Add(-1) == 0 {
		untrackInbox(ib)
		ib.box.Close()
	}
}

// selfPID is this process's pid, which names the holder of a consumer
// lock and the owner of a route. Read once: os.Getpid is a system call on
// every call, and a poll that delivers takes the lock, so a call there
// would weigh on a one-core SEND stream (BenchmarkSendStream8).
var selfPID = uint32(os.Getpid())

// takeRoute gives q a free route, naming it; false when none is free.
func (ib *rqInbox) takeRoute(q *sendq) (uint16, bool) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if ib.closed {
		return 0, false
	}
	me := uint64(selfPID)<<32 | uint64(q.id)
	for i := range ib.routes {
		rt := &ib.routes[i]
		if atomic.LoadUint64(&rt.Owner) != 0 || !atomic.CompareAndSwapUint64(&rt.Owner, 0, me) {
			continue
		}
		// Set before the route's first message, which a deliverer
		// reads after it: stores are seen in order.
		fillSender(&rt.Sender, q)
		rt.Reset(ib.box)
		ib.owners[i] = q
		if ib.local {
			ib.refs.Add(1)
		}
		return uint16(i), true
	}
	return 0, false
}

// dropRoute frees a route whose owner has no message left in the inbox.
func (ib *rqInbox) dropRoute(route uint16) {
	ib.mu.Lock()
	ib.owners[route] = nil
	atomic.StoreUint64(&ib.routes[route].Owner, 0)
	ib.mu.Unlock()
	if ib.local {
		ib.unref()
	}
}

// inboxBatch is the most messages an arm delivers at once (see
// deliverInbox); a poll delivers as many as its output holds, a helping
// sender up to its own.
const inboxBatch = 64

// deliverInbox is the queue's own delivery of its inbox, up to max
// messages, unless another party is delivering: a poll's, with out, whose
// records go straight there, not through the JFC's ring, while the ring is
// empty (a record in it would be older); Rearm's, without, into the ring,
// where the records then refuse the arm. It returns how many records it
// put in out. Inside posting, so that a Close waits before it unmaps what
// this reads.
func (q *recvq) deliverInbox(max int, out []provider.CR) int {
	ib := q.inbox
	if !ib.box.Waiting() || !q.posting.enter(&q.closed) {
		return 0
	}
	// A sign of life for the senders whose messages wait (see pollInbox):
	// counted only then, as a poll that finds none has nobody to tell.
	ib.box.Bump()
	n := 0
	if ib.box.TryLock(selfPID) {
		n, _ = q.view.deliverLocked(max, ^uint64(0), out)
		ib.box.Unlock()
	}
	q.posting.leave()
	return n
}

// deliverLocked delivers v's inbox's messages in order, up to max of them
// and up to position until, under the consumer lock. With out, their
// records go there, not to the JFC's ring, and delivery stops when out is
// full or the ring holds a record. It returns how many records it put in
// out, and whether it stopped at a message that no receive was posted for
// (RNR): that message stays first in the inbox. deq moves past each
// message as soon as it is delivered, so a helper that dies midway leaves
// the next deliverer nothing to deliver twice but the message it was on.
func (v *rqView) deliverLocked(max int, until uint64, out []provider.CR) (made int, rnr bool) {
	ib := v.inbox
	b := ib.box
	pos := b.Head()
	var e inbox.Entry
	jr := v.jfc.ring
	for n := 0; n < max && pos < until; n++ {
		if out != nil && made == len(out) {
			break
		}
		if !b.EntryAt(pos, &e) {
			break
		}
		// Read after the message was seen, never before: a record its
		// sender wrote before the message (a SEND it delivered itself
		// just before it left this one) is then in sight, since stores
		// are seen in order, and goes out first. Looked at before the
		// message, the ring could be seen empty, the record and the
		// message both land, and the message overtake the record.
		if out != nil && atomic.LoadUint64(jr.EnqPos()) != atomic.LoadUint64(jr.DeqPos()) {
			break
		}
		if e.Hdr.Route < inbox.Routes {
			rt := &ib.routes[e.Hdr.Route]
			if !rt.Skips(pos) {
				var cr *provider.CR
				if out != nil {
					cr = &out[made]
				}
				st, wait := v.deliverEntry(&e, rt, cr)
				if wait {
					rnr = true
					break
				}
				if cr != nil {
					made++
				}
				if st != provider.CRSuccess {
					rt.Fail(pos, st)
				}
			}
		}
		pos += e.Cells
		b.Consume(pos)
	}
	return made, rnr
}

// deliverEntry delivers the message e into the queue's oldest receive and
// writes its receive record, into out or else the JFC's ring: what deliver
// does for a SEND from another queue's core. It returns the status the
// sender completes with, or rnr when no receive is posted (and out is not
// written).
func (v *rqView) deliverEntry(e *inbox.Entry, rt *inbox.Route, out *provider.CR) (provider.CRStatus, bool) {
	if st := v.ready(); st != provider.CRSuccess {
		return st, false
	}
	pos, ok := v.ring.Claim()
	if !ok {
		return provider.CRSuccess, true
	}
	v.noteTaken()
	userCtx := (*recvSlot)(v.ring.Payload(pos)).userCtx
	n := e.Hdr.Len
	if v.copyEntry(e, pos) {
		v.ring.Release(pos)
		if out != nil {
			v.recvCR(out, e, rt, userCtx)
			return provider.CRSuccess, false
		}
		rpos, reserved := v.jfc.ring.ReserveRecord()
		if !reserved {
			v.jfc.overflow()
			return provider.CRSuccess, false
		}
		solicited := e.Hdr.Flags&inboxSolicited != 0
		urgent := v.jfc.writeRecvOf(rpos, provider.Opcode(e.Hdr.Opcode), solicited, e.Imm, v, &rt.Sender, userCtx, n)
		v.jfc.notify(urgent)
		return provider.CRSuccess, false
	}
	// The slow way, for several buffers, memory of another process and
	// every failure: deliver's lists.
	var r sg.List
	st := v.recvBuffers(pos, &r)
	var cr provider.CR
	v.recvCR(&cr, e, rt, userCtx)
	cr.Len = 0
	sender := provider.CRSuccess
	switch {
	case st != provider.CRSuccess:
		cr.Status, sender = provider.CRLocAccessErr, provider.CRRemOperationErr
	case uint64(n) > r.Total():
		cr.Status, sender = provider.CRLocLenErr, provider.CRRemOperationErr
	default:
		var buf [inbox.MaxData]byte
		data := buf[:v.inbox.box.CopyOut(e, buf[:])]
		var src sg.List
		src.AddBytes(data)
		m, err := sg.Copy(&r, &src)
		if err != nil {
			cr.Status, sender = provider.CRLocAccessErr, provider.CRRemOperationErr
		}
		cr.Len = uint32(m)
	}
	r.Release()
	v.ring.Release(pos)
	if out != nil {
		*out = cr
	} else {
		v.jfc.push(&cr, 0)
	}
	if sender != provider.CRSuccess && v.peer != nil {
		// A buffer the peer could not describe any more because its
		// process went away is the peer's loss (as in deliver).
		if lost := v.peer.lossStatus(); lost != provider.CRSuccess {
			sender = lost
		}
	}
	return sender, false
}

// recvCR fills c with the successful record of the receive (userCtx) that
// the message e took, field by field (see toCR).
func (v *rqView) recvCR(c *provider.CR, e *inbox.Entry, rt *inbox.Route, userCtx uint64) {
	op := provider.Opcode(e.Hdr.Opcode)
	flags, imm := recvFlagsOf(op, e.Hdr.Flags&inboxSolicited != 0, e.Imm, v)
	c.Status, c.Flags = provider.CRSuccess, flags
	c.Opcode, _ = provider.CROpcodeOf(op)
	c.WROpcode = 0
	c.Len, c.UserCtx, c.LocalID = e.Hdr.Len, userCtx, v.id
	c.RemoteID.UASID, c.RemoteID.ID = uint32(rt.Sender.IDs), uint32(rt.Sender.IDs>>32)
	binary.NativeEndian.PutUint64(c.RemoteID.EID[:8], rt.Sender.EID[0])
	binary.NativeEndian.PutUint64(c.RemoteID.EID[8:], rt.Sender.EID[1])
	c.Imm = imm
}

// copyEntry copies the message e into the receive at pos the short way,
// when the receive is one buffer of memory this process maps, large
// enough; false when it is not, and nothing was copied.
func (v *rqView) copyEntry(e *inbox.Entry, pos uint64) bool {
	sges := v.sges(pos)
	if len(sges) != 1 {
		return false
	}
	b := &sges[0]
	ref := v.bufRef(b.handle, b.gen)
	if ref == nil || ref.mem == nil || b.length < e.Hdr.Len || ref.acquire() != provider.CRSuccess {
		return false
	}
	var dst sg.Span
	ok := ref.span(b.addr, e.Hdr.Len, &dst)
	if ok {
		v.inbox.box.CopyOut(e, dst.B)
	}
	ref.release()
	return ok
}

// recvBuffers acquires the buffers of the receive at pos into r; on
// failure r holds nothing and the status says why.
func (v *rqView) recvBuffers(pos uint64, r *sg.List) provider.CRStatus {
	r.Reset()
	for _, b := range v.sges(pos) {
		ref := v.bufRef(b.handle, b.gen)
		if ref == nil || ref.acquire() != provider.CRSuccess {
			r.Release()
			return provider.CRLocAccessErr
		}
		if !ref.span(b.addr, b.length, r.Next()) {
			ref.release()
			r.Release()
			return provider.CRLocAccessErr
		}
		r.Grow()
	}
	return provider.CRSuccess
}

// failInbox ends the messages left in the inbox of a queue that is going
// away (its state word says closed): their senders complete them with
// REM_ACCESS_ABORT_ERR, as a SEND to a closed queue does. A sender of
// another process that leaves one later finds the state when it delivers
// it itself.
func (q *recvq) failInbox() { q.endInbox(true) }

// endInbox fails the messages in the inbox, as failInbox does; with
// closing, no sender of this process leaves one after it. Without, as when
// the queue leaves READY, senders go on leaving messages, which fail when
// delivered while the queue is not READY.
func (q *recvq) endInbox(closing bool) {
	ib := q.inbox
	// Senders of this process leave messages under their queue's lock
	// once they saw the queue open (postInbox): after each route owner's
	// lock was taken once, none is left half written, and none comes
	// after.
	ib.mu.Lock()
	if closing {
		ib.closed = true
	}
	var owners []*sendq
	for _, o := range ib.owners {
		if o != nil {
			owners = append(owners, o)
		}
	}
	ib.mu.Unlock()
	quiesce(owners)
	ib.box.Lock(selfPID, nil)
	b := ib.box
	pos := b.Head()
	var e inbox.Entry
	for b.EntryAt(pos, &e) {
		if e.Hdr.Route < inbox.Routes {
			if rt := &ib.routes[e.Hdr.Route]; !rt.Skips(pos) {
				rt.Fail(pos, provider.CRRemAccessAbortErr)
			}
		}
		pos += e.Cells
	}
	b.Consume(pos)
	ib.box.Unlock()
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

// deliverable tells whether the inbox holds messages that receives were
// posted for, which a poll would deliver.
func (q *recvq) deliverable() bool {
	if !q.posting.enter(&q.closed) {
		return false
	}
	defer q.posting.leave()
	return q.inbox.box.Waiting() && q.ring.Len() > 0
}
