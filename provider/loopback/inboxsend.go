package loopback

import (
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// The sender's side of receiver-side delivery (docs/architecture.md): a
// send queue leaves small SENDs to a queue of this process in its inbox,
// and completes them once the inbox has delivered them.

// inboxReq is a SEND a queue left in an inbox and has not completed yet:
// what its completion record needs, and its retry the usual way if it is
// taken back.
type inboxReq struct {
	pos, end uint64 // its cells
	seq      uint64
	userCtx  uint64
	imm      uint64
	rem      *remote
	n        uint32
	op       provider.Opcode
	flags    provider.WRFlags
	// local is the SGE the data came from, when not inline: taken back,
	// the request reads it again when it runs, as a request waiting for
	// a receive does (its segment may be gone by then).
	local provider.SGE
}

// inboxSends is a send queue's use of inboxes, under its lock: the route
// it holds (in one receive queue's inbox at a time) and its requests left
// there, oldest first.
type inboxSends struct {
	v     *rqView // whose inbox the route is in; nil: none held
	route uint16
	reqs  []inboxReq // a ring, a power of two at least the queue's depth
	head  uint64
	tail  uint64
	// The helping rule's clock: how many polls found nothing to
	// complete, and the inbox's head and the time at the last look.
	idle     int
	seenHead uint64
	seenAt   time.Duration
	// The receiver's activity count at the last empty poll, and how
	// many empty polls in a row found it unchanged.
	seenActive uint32
	still      int
	// timer looks at the requests when nobody polls for them.
	timer     *time.Timer
	timerOn   bool
	timerHead uint64
	// runs counts the post-list runs left with one reservation
	// (postInboxRun), for tests.
	runs uint64
}

// inboxGrace is how long a queue's requests wait in an inbox that does not
// move before their sender, polling, delivers them itself.
const inboxGrace = 100 * time.Microsecond

// inboxStream is how many requests a queue must have outstanding, this one
// included, for a SEND to go to the inbox: a stream of them, not one the
// caller waits for.
const inboxStream = 2

// inboxPollEvery is how many polls of a JFC pass between looks at the
// inbox requests of the send queues that complete into it (see
// jfc.sweepDue).
const inboxPollEvery = 8

// inboxStillPolls is how many empty polls in a row must find the receiver
// neither polling nor posting receives before its sender delivers.
const inboxStillPolls = 4

// inboxTick (a variable for tests) is how often a queue with requests in an inbox looks at them
// when nobody polls its JFC: a sender waiting for its completion event
// gets it, and a message no receive was posted for goes back to the RNR
// retries.
var inboxTick = time.Millisecond

// inboxOff turns inboxes off, for tests that compare with and without.
var inboxOff bool

// monoBase is where monoNow counts from.
var monoBase = time.Now()

func monoNow() time.Duration { return time.Since(monoBase) }

func (s *inboxSends) at(i uint64) *inboxReq { return &s.reqs[i&uint64(len(s.reqs)-1)] }

// inboxFits tells whether a small SEND of sequence seq to rem may go to
// rem's inbox: it has one, and nothing in this queue must come first. The
// checks are cheap, and made before the request's data is gathered.
func (q *sendq) inboxFits(seq uint64, rem *remote) bool {
	return len(q.pending) == 0 && q.state == provider.StateReady && q.inboxStreams(seq, rem)
}

// inboxStreams is inboxFits without its checks of the queue's own state,
// for a post that has made them (a prepared one's unchanged).
func (q *sendq) inboxStreams(seq uint64, rem *remote) bool {
	v := rem.rq
	if seq-q.loadCredited() < q.inboxMin || v.inbox == nil || inboxOff ||
		q.jfc.view.ring.Meta(metaArmed).Load() != disarmed {
		// An armed JFC waits for an event that only a record written
		// now raises. A queue with nothing else outstanding is a
		// caller that waits for this request: it completes sooner
		// delivered the usual way than after the receiver's next poll.
		// A queue that suspends on an error never has inboxMin
		// outstanding (see sendq.inboxMin).
		return false
	}
	// Not inside enterRQ: a locked instruction here would wait for the
	// last message to reach the receiver's core. A Close of a queue of
	// this process waits for the lock of every queue that holds a route
	// in its inbox instead, so a message left after this check is failed
	// by it; one left in a peer's queue meanwhile is failed by whoever
	// delivers it. A lost peer's mappings stay until this lock is let go.
	return v.ready() == provider.CRSuccess
}

// postInbox leaves the SEND w of sequence seq, whose data is data (at most
// inbox.MaxData bytes), in its target's inbox, once inboxFits said it may;
// false, with nothing done, when the inbox has no room or no route: it
// goes the usual way.
func (q *sendq) postInbox(w *provider.WR, seq uint64, rem *remote, data []byte) bool {
	v := rem.rq
	s := &q.ib
	if s.v != v && !q.switchRoute(v) {
		return false
	}
	pos, ok := v.inbox.box.Put(q.inboxHeaderOf(w, len(data)), w.Imm, data)
	if !ok {
		return false
	}
	v.jfc.notify(w.Flags&provider.FlagSolicited != 0)
	q.noteInbox(w, seq, rem, pos, inbox.Cells(len(data)), len(data))
	q.inboxPosted()
	return true
}

// postInboxPrepared is postInbox for the prepared small SEND p of
// sequence seq, once inboxStreams said it may: its header but for the
// route, and its count of cells, were worked out at Prepare.
func (q *sendq) postInboxPrepared(p *prepared, seq uint64) bool {
	v := p.rem.rq
	s := &q.ib
	if s.v != v && !q.switchRoute(v) {
		return false
	}
	b := v.inbox.box
	pos, ok := b.Reserve(p.cells)
	if !ok {
		return false
	}
	w := &p.wr[0]
	b.WriteCells(pos, p.hdr|uint64(s.route)<<32, w.Imm, p.local, p.cells)
	v.jfc.notify(w.Flags&provider.FlagSolicited != 0)
	q.noteInbox(w, seq, p.rem, pos, p.cells, len(p.local))
	q.inboxPosted()
	return true
}

// inboxHeaderOf is the header of the SEND w with n bytes of data, from the
// queue's route.
func (q *sendq) inboxHeaderOf(w *provider.WR, n int) inbox.Header {
	var hf uint8
	if w.Flags&provider.FlagSolicited != 0 {
		hf = inboxSolicited
	}
	return inbox.Header{Len: uint32(n), Route: q.ib.route, Opcode: uint8(w.Opcode), Flags: hf}
}

// noteInbox keeps the SEND w of sequence seq, left in rem's inbox in the
// cells from pos with n bytes of data, among the queue's inbox requests.
func (q *sendq) noteInbox(w *provider.WR, seq uint64, rem *remote, pos, cells uint64, n int) {
	s := &q.ib
	r := s.at(s.tail)
	r.pos, r.end, r.seq, r.userCtx, r.imm, r.rem = pos, pos+cells, seq, w.UserCtx, w.Imm, rem
	r.n, r.op, r.flags = uint32(n), w.Opcode, w.Flags
	if w.Flags&provider.FlagInline == 0 && len(w.Local) == 1 {
		r.local = w.Local[0]
	} else {
		r.local = provider.SGE{}
	}
	s.tail++
}

// inboxPosted publishes the queue's count of inbox requests after posts,
// and starts the timer that covers them if it is not running.
func (q *sendq) inboxPosted() {
	q.countInbox()
	if !q.ib.timerOn {
		q.armInboxTimer()
	}
}

// countInbox publishes how many requests the queue has in its inbox. Only
// the queue's lock holder writes the count, so it is a plain store: an
// atomic add is a locked instruction, which would wait for the message
// just left to reach the receiver's core before the post could return.
func (q *sendq) countInbox() { shm.StoreRelease(&q.ibOut, q.ib.tail-q.ib.head) }

// inboxOut is how many requests the queue has in its inbox, for a poll or
// an arm that looks without the queue's lock.
func (q *sendq) inboxOut() uint64 { return atomic.LoadUint64(&q.ibOut) }

// switchRoute moves the queue's route to v's inbox, if it has no request
// left in the old one and v has a route free.
func (q *sendq) switchRoute(v *rqView) bool {
	s := &q.ib
	if s.head != s.tail {
		return false
	}
	q.dropRoute()
	route, ok := v.inbox.takeRoute(q)
	if !ok {
		return false
	}
	if s.reqs == nil {
		s.reqs = make([]inboxReq, shm.PhysSlots(q.depth))
	}
	s.v, s.route = v, route
	return true
}

// dropRoute gives the queue's route back; it has no request left in it.
// A lost peer's inbox is not written: it is gone with the peer.
func (q *sendq) dropRoute() {
	s := &q.ib
	if s.v != nil {
		if s.v.peer == nil || s.v.peer.usable() == provider.CRSuccess {
			s.v.inbox.dropRoute(s.route)
		}
		s.v = nil
	}
}

// inboxGone tells whether the queue's inbox belongs to a peer that was
// lost: its mappings must not be touched, and inboxLost has ended the
// requests.
func (q *sendq) inboxGone() bool {
	v := q.ib.v
	return v != nil && v.peer != nil && v.peer.usable() != provider.CRSuccess
}

// reapInbox completes, in order, the queue's requests that their inbox has
// delivered, and returns how many it completed. A request whose delivery
// failed fails the queue, as a SEND that fails the usual way does, and the
// requests after it come back to be flushed (see withdrawInbox).
func (q *sendq) reapInbox() int {
	s := &q.ib
	if s.head == s.tail {
		return 0
	}
	if q.inboxGone() {
		q.inboxLost(s.v.peer)
		return 1
	}
	ib := s.v.inbox
	d := ib.box.Head()
	// Read after deq: a deliverer stores the failure first.
	fa := ib.routes[s.route].Failed()
	done := q.completeDelivered(d, fa)
	q.countInbox()
	if s.head != s.tail && fa != 0 && s.at(s.head).end <= d {
		q.withdrawInbox() // the request at the head failed
		return done + 1
	}
	return done
}

// completeDelivered completes, in order, the requests that deq d has
// passed, up to the one that failed (fa is the route's failAt), and
// returns how many it completed.
func (q *sendq) completeDelivered(d, fa uint64) int {
	s := &q.ib
	done := 0
	for ; s.head != s.tail; s.head++ {
		r := s.at(s.head)
		if r.end > d || (fa != 0 && r.pos >= fa-1) {
			break
		}
		q.completeOf(r.userCtx, r.flags, r.op, r.seq, r.rem, provider.CRSuccess, r.n)
		done++
	}
	return done
}

// withdrawInbox ends the queue's use of its inbox for now. Under the
// consumer lock, where deq stands still, the requests it has passed
// complete (the one that failed, if one did, fails the queue), and the
// others come back into the queue's pending list: they run the usual way,
// or are flushed if the queue is in ERROR. Their messages stay in the
// inbox but are not delivered.
func (q *sendq) withdrawInbox() {
	s := &q.ib
	if s.head == s.tail {
		return
	}
	v := s.v
	ib := v.inbox
	if !ib.box.Lock(selfPID, q.inboxGone) {
		q.inboxLost(v.peer)
		return
	}
	d := ib.box.Head()
	rt := &ib.routes[s.route]
	fa := rt.Failed()
	q.completeDelivered(d, fa)
	if r := s.at(s.head); s.head != s.tail && fa != 0 && r.pos == fa-1 {
		w := provider.WR{Opcode: r.op, Flags: r.flags, UserCtx: r.userCtx}
		s.head++
		q.fail(&w, r.seq, r.rem, provider.CRStatus(atomic.LoadUint64(&rt.FailSt)))
	}
	for ; s.head != s.tail; s.head++ {
		r := s.at(s.head)
		p := q.takeBack(r)
		if r.local.Seg == nil && r.pos >= d {
			// Still in the inbox, where nobody writes it while the
			// lock is held; one that deq passed was skipped after a
			// failure, and the queue in ERROR only flushes it.
			var data [inbox.MaxData]byte
			e := inbox.Entry{Pos: r.pos, Hdr: inbox.Header{Len: r.n}}
			p.buf = append(p.buf, data[:ib.box.CopyOut(&e, data[:])]...)
			p.wr.Inline = p.buf
		}
	}
	rt.Reset(ib.box)
	ib.box.Unlock()
	q.countInbox()
	if q.state == provider.StateReady && len(q.pending) > 0 {
		q.retries = 0
		q.progress(retryKick)
	}
}

// takeBack puts the request r, taken out of an inbox, at the end of the
// pending list, reading its SGE again when it runs or with its inline data
// (for the caller to fill in).
func (q *sendq) takeBack(r *inboxReq) *pendingWR {
	p := q.takeFree()
	p.wr = provider.WR{Opcode: r.op, Flags: r.flags, UserCtx: r.userCtx, Imm: r.imm}
	if r.rem != nil {
		p.wr.Target = &r.rem.self
	}
	p.seq, p.rem = r.seq, r.rem
	p.buf = p.buf[:0]
	if r.local.Seg != nil {
		p.sge[0] = r.local
		p.wr.Local = p.sge[:1]
	} else {
		p.wr.Flags |= provider.FlagInline
	}
	q.pending = append(q.pending, p)
	return p
}

// inboxLost ends the requests the queue left in the inbox of p's queue,
// the peer being lost: the oldest fails with the loss's status and the
// queue goes to ERROR, the others are flushed, as for requests waiting for
// a receive at it. Its inbox is not touched.
func (q *sendq) inboxLost(p *peerConn) {
	s := &q.ib
	if s.v == nil || s.v.peer != p {
		return
	}
	if s.head != s.tail {
		r := s.at(s.head)
		w := provider.WR{Opcode: r.op, Flags: r.flags, UserCtx: r.userCtx}
		s.head++
		if q.state == provider.StateReady {
			q.fail(&w, r.seq, r.rem, p.lossStatus())
		} else {
			q.takeBack(r)
		}
		for ; s.head != s.tail; s.head++ {
			q.takeBack(s.at(s.head))
		}
	}
	s.v = nil
	q.countInbox()
}

// clearInbox finishes the queue's requests in an inbox before a request
// that goes another way, so that requests run and complete in order: it
// completes those delivered, delivers the others itself, and takes back
// those it cannot deliver (no receive). False: requests wait in the
// pending list, and the next one must wait behind them.
func (q *sendq) clearInbox() bool {
	if q.inboxOut() != 0 {
		q.settleInbox()
	}
	return len(q.pending) == 0
}

// settleInbox leaves the queue no request in an inbox: each is completed,
// delivered by this sender and completed, or taken back.
func (q *sendq) settleInbox() {
	s := &q.ib
	if q.reapInbox(); s.head == s.tail {
		return
	}
	if q.inboxGone() {
		q.inboxLost(s.v.peer)
		return
	}
	ib := s.v.inbox
	until := s.at(s.tail - 1).end
	if !ib.box.Lock(selfPID, q.inboxGone) {
		q.inboxLost(s.v.peer)
		return
	}
	s.v.deliverLocked(int(until-ib.box.Head()), until, nil)
	ib.box.Unlock()
	if q.reapInbox(); s.head != s.tail {
		q.withdrawInbox()
	}
}

// pollInbox is the queue's part of a poll of its JFC: it completes what was
// delivered and, when nothing was for inboxGrace while the inbox stood
// still, delivers its requests itself (the receiver is not polling).
func (q *sendq) pollInbox() {
	if !q.mu.TryLockOwner() {
		return // a post or another poll is in the queue
	}
	defer q.mu.UnlockOwner()
	s := &q.ib
	if q.closed.Load() || s.head == s.tail {
		return
	}
	if q.reapInbox() > 0 || s.head == s.tail {
		s.idle, s.seenAt, s.still = 0, 0, 0
		return
	}
	ib := s.v.inbox
	if a := ib.box.Active(); a != s.seenActive {
		s.seenActive, s.still = a, 0
	} else if s.still++; s.still >= inboxStillPolls && ib.box.Held().Load() == 0 {
		s.still = 0
		q.settleInbox()
		return
	}
	// The clock is read every 4 looks: a poll costs less.
	if s.idle++; s.idle&3 != 0 {
		return
	}
	now, h := monoNow(), ib.box.Head()
	if s.seenAt == 0 || h != s.seenHead {
		s.seenAt, s.seenHead = now, h
		return
	}
	if now-s.seenAt >= inboxGrace {
		s.seenAt = 0
		q.settleInbox()
	}
}

func (q *sendq) armInboxTimer() {
	s := &q.ib
	s.timerOn = true
	if s.timer == nil {
		s.timer = time.AfterFunc(inboxTick, q.inboxTimer)
		return
	}
	s.timer.Reset(inboxTick)
}

// inboxTimer completes what was delivered since its last tick and, if the
// inbox stood still, settles the queue's requests.
func (q *sendq) inboxTimer() {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := &q.ib
	s.timerOn = false
	if q.closed.Load() || s.head == s.tail {
		return
	}
	if q.inboxGone() {
		q.inboxLost(s.v.peer)
		return
	}
	if h := s.v.inbox.box.Head(); h != s.timerHead {
		s.timerHead = h
		q.reapInbox()
	} else {
		q.settleInbox()
	}
	if s.head != s.tail {
		q.armInboxTimer()
	}
}

// quietInbox is for a queue leaving READY (Modify, Flush, Close): its
// delivered requests complete, the others come back to its pending list.
func (q *sendq) quietInbox() {
	if q.inboxOut() == 0 {
		return
	}
	q.reapInbox()
	q.withdrawInbox()
}

// dataOf gathers the data of w, a SEND of at most inbox.MaxData bytes, into
// buf; false when its memory is not this process's to read, or not valid
// (the usual way reports that).
func (q *sendq) dataOf(w *provider.WR, buf *[inbox.MaxData]byte) ([]byte, bool) {
	if w.InlineBytes() {
		return w.Inline, true
	}
	l := &q.sg[0]
	if !q.local(w, l) {
		return nil, false
	}
	// One SGE at most: a request taken back keeps it to read again.
	n, ok := 0, !l.HasRemote() && (len(w.Local) <= 1 || w.Flags&provider.FlagInline != 0)
	for i := 0; ok && i < l.Len(); i++ {
		n += copy(buf[n:], l.At(i).B)
	}
	l.Release()
	return buf[:n], ok
}

// inboxShaped tells whether w is a SEND small enough for an inbox.
func inboxShaped(w *provider.WR) bool {
	return (w.Opcode == provider.OpSend || w.Opcode == provider.OpSendImm) && w.DataLen() <= inbox.MaxData
}
