package loopback

import (
	"encoding/binary"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// crSlot is a completion record as it lies in a JFC ring: 7 words, so
// that with the ring's sequence word a record is one cache line to move
// between cores, and a producer writes it with 7 stores straight into the
// slot. A record is written while the line is still on its way from the
// core that read it last, and every store waits in the store buffer
// until it arrives: the fewer, the more records a run keeps in flight.
type crSlot struct {
	userCtx uint64
	// word is the immediate data of a receive-side record (CRFlagRecv),
	// and for a send-side one the sequence of its request, which tells the
	// poller which slots of the send queue localID names to free. A
	// send-side record carries no immediate data and a receive-side one
	// frees no slot, so they share the word.
	word uint64
	// remoteEID holds the EID's 16 bytes in native byte order.
	remoteEID [2]uint64
	ids       uint64 // remote UASID | remote jetty ID << 32
	lenLocal  uint64 // length | local queue ID << 32
	kind      uint64 // status | opcode << 8 | flags << 16
}

func (s *crSlot) flags() provider.CRFlags { return provider.CRFlags(s.kind >> 16) }

var crSlotSize = unsafe.Sizeof(crSlot{})

// crHole marks a slot that a producer reserved and died before filling:
// the repair publishes it so that the records after it can be read, and
// Poll skips it. No provider.CRFlags value uses this bit.
const crHole provider.CRFlags = 1 << 15

// Arm states, in a JFC ring's metaArmed word.
const (
	disarmed uint32 = iota
	armedAll
	armedSolicited
)

// Meta words of a JFC ring. They are shared with every process that pushes
// records, so the arm state and the event flag work across processes.
const (
	metaArmed    = 0 // an arm state
	metaNotified = 1 // 1 while an event is signalled and not yet taken by Wait
	metaOverflow = 2 // 1 once a record was dropped
)

// jfcView is a JFC as a producer of records sees it: the ring and the event
// fd of its JFCE, in this process or mapped from a peer.
type jfcView struct {
	ring *shm.Ring
	efd  int  // the JFCE's eventfd, -1 without one
	own  *jfc // the JFC itself when it is in this process
	// peer and id name the JFC when it lives in another process, so that an
	// overflow can be reported to its owner.
	peer *peerConn
	id   uint32
}

// push adds a record. It is called by whichever goroutine, in whichever
// process, completed the request.
func (v *jfcView) push(cr *provider.CR, sqSeq uint64) {
	pos, ok := v.ring.ReserveRecord()
	v.pushReserved(pos, ok, cr, sqSeq)
}

// pushReserved is push for a record whose slot was reserved earlier: at
// pos, or, when reserved is false, in a ring that had no room.
func (v *jfcView) pushReserved(pos uint64, reserved bool, cr *provider.CR, sqSeq uint64) {
	if !reserved {
		v.overflow()
		return
	}
	v.write(pos, cr, sqSeq)
	v.notify(urgent(cr))
}

// fillSender sets s, the words of a receive record that name the sender,
// to name q.
func fillSender(s *inbox.Sender, q *sendq) {
	s.EID[0] = binary.NativeEndian.Uint64(q.ctx.eid[:8])
	s.EID[1] = binary.NativeEndian.Uint64(q.ctx.eid[8:])
	s.IDs = uint64(q.ctx.uasid) | uint64(q.id)<<32
}

// writeRecv fills the reserved slot pos with the successful record of a
// receive of rq that the message w from sw consumed (n bytes into the
// receive userCtx), publishes it, and tells whether it is urgent. Unlike
// write it reads no provider.CR: one written just before, field by field,
// and read back in the wider loads write combines them into, cannot be
// forwarded, so each such load waits for every store before it, the
// messages' stores to the receiver's lines among them.
func (v *jfcView) writeRecv(pos uint64, w *provider.WR, rq *rqView, sw *inbox.Sender, userCtx uint64, n uint32) bool {
	return v.writeRecvOf(pos, w.Opcode, w.Flags&provider.FlagSolicited != 0, w.Imm, rq, sw, userCtx, n)
}

// writeRecvOf is writeRecv for a message known by its opcode, whether it
// was solicited and its immediate data.
func (v *jfcView) writeRecvOf(pos uint64, op provider.Opcode, solicited bool, imm uint64, rq *rqView, sw *inbox.Sender, userCtx uint64, n uint32) bool {
	flags, imm := recvFlagsOf(op, solicited, imm, rq)
	s := (*crSlot)(v.ring.Payload(pos))
	s.userCtx = userCtx
	s.word = imm
	s.remoteEID = sw.EID
	s.ids = sw.IDs
	s.lenLocal = uint64(n) | uint64(rq.id)<<32
	crop, _ := provider.CROpcodeOf(op)
	s.kind = uint64(provider.CRSuccess) | uint64(crop)<<8 | uint64(flags)<<16
	v.ring.Publish(pos)
	return flags&provider.CRFlagSolicited != 0
}

// write fills the reserved slot pos with the record and publishes it.
func (v *jfcView) write(pos uint64, cr *provider.CR, sqSeq uint64) {
	s := (*crSlot)(v.ring.Payload(pos))
	word := sqSeq
	if cr.Flags&provider.CRFlagRecv != 0 {
		word = cr.Imm
	}
	eid := &cr.RemoteID.EID
	s.userCtx = cr.UserCtx
	s.word = word
	s.remoteEID[0] = binary.NativeEndian.Uint64(eid[:8])
	s.remoteEID[1] = binary.NativeEndian.Uint64(eid[8:])
	s.ids = uint64(cr.RemoteID.UASID) | uint64(cr.RemoteID.ID)<<32
	s.lenLocal = uint64(cr.Len) | uint64(cr.LocalID)<<32
	op := uint64(cr.WROpcode)
	if cr.Flags&provider.CRFlagRecv != 0 {
		op = uint64(cr.Opcode)
	}
	s.kind = uint64(cr.Status) | op<<8 | uint64(cr.Flags)<<16
	v.ring.Publish(pos)
}

// urgent tells whether a record wakes a JFC armed for solicited events only.
func urgent(cr *provider.CR) bool {
	return cr.Status != provider.CRSuccess || cr.Flags&provider.CRFlagSolicited != 0
}

// notify signals the JFC's event once records were published, if it is
// armed for them (urgent: one of them wakes a solicited-only arm).
//
// Rearm stores the arm state and then counts the records reserved; the
// producer reserved with a CAS before it reads the arm state here. Both are
// sequentially consistent, so either Rearm sees the records and refuses, or
// this sees the arm.
func (v *jfcView) notify(urgent bool) {
	armed := v.ring.Meta(metaArmed)
	if mode := armed.Load(); mode != disarmed {
		wanted := mode == armedAll || urgent
		if wanted && armed.CompareAndSwap(mode, disarmed) {
			v.ring.Meta(metaNotified).Store(1)
			if v.efd >= 0 {
				signalEventfd(v.efd)
			}
		}
	}
}

// overflow reports the first dropped record as a JFC_ERR async event of the
// JFC's owner.
func (v *jfcView) overflow() {
	if v.ring.Meta(metaOverflow).Swap(1) != 0 {
		return
	}
	if v.own != nil {
		v.own.ctx.events.Raise(provider.EventJFCErr, &v.own.src, 0)
		return
	}
	if v.peer != nil {
		v.peer.notifyOverflow(v.id)
	}
}

type jfc struct {
	ctx   *lbContext
	id    uint32
	depth int
	view  jfcView
	jfce  *jfce
	src   asyncq.Source

	stalled stalledQueues
	// The receive queues whose inboxes this JFC's polls deliver, and the
	// send queues whose inbox requests they complete.
	inboxRQs queueList[*recvq]
	inboxSQs queueList[*sendq]
	sweeps   uint64 // polls, for sweepDue
	// alone is set for a lock-free JFC (provider.JFCConfig.LockFree):
	// its poller claims records and credits their queues with plain
	// stores, where concurrent pollers need a CAS for each.
	alone bool

	events atomic.Int32 // delivered by Wait, not yet acked
	users  atomic.Int32 // queues completing into this JFC
	closed atomic.Bool

	// polled counts the records Poll returned, errs those with an error
	// status by provider.StatusSlot (see stats.go).
	polled uint64
	errs   [provider.StatusSlots]atomic.Uint64
}

func (c *lbContext) NewJFC(cfg provider.JFCConfig) (provider.JFC, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if cfg.Depth <= 0 || cfg.Depth > maxDepth {
		return nil, provider.Errorf(provider.ErrInvalid, "jfc depth %d not in [1,%d]", cfg.Depth, maxDepth)
	}
	var e *jfce
	if cfg.JFCE != nil {
		var ok bool
		if e, ok = cfg.JFCE.(*jfce); !ok || e.ctx != c {
			return nil, provider.Errorf(provider.ErrInvalid, "jfce of another provider or context")
		}
		if e.closed.Load() {
			return nil, errClosed("jfce")
		}
	}
	r, err := shm.NewRing("jfc", cfg.Depth, crSlotSize)
	if err != nil {
		return nil, err
	}
	j := &jfc{ctx: c, depth: cfg.Depth, jfce: e, alone: cfg.LockFree}
	j.view = jfcView{ring: r, efd: -1, own: j}
	if e != nil {
		j.view.efd = e.efd
	}
	j.src.Owner = cfg.Owner
	if j.src.Owner == nil {
		j.src.Owner = j
	}
	if j.id, err = c.adopt(j); err != nil {
		r.Close()
		return nil, err
	}
	j.view.id = j.id
	if e != nil {
		e.add(j)
	}
	return j, nil
}

func (j *jfc) Depth() int { return j.depth }

func (j *jfc) Poll(crs []provider.CR) (int, error) {
	if j.closed.Load() {
		return 0, errClosed("jfc")
	}
	if j.sweepDue() {
		j.sweepSenders()
	}
	r := j.view.ring
	n := 0
	for n < len(crs) {
		end := min(len(crs), n+pollBatch)
		_, made := claimRecords(r, crs[n:end], j.alone)
		for i := n; i < n+made; i++ {
			// A send-side record frees its queue's slots, once
			// claimed; its sequence came in Imm.
			c := &crs[i]
			if c.Status != provider.CRSuccess {
				j.countError(c.Status)
			}
			if c.Flags&provider.CRFlagRecv == 0 {
				if q := j.ctx.sendqByID(c.LocalID); q != nil {
					if j.alone {
						q.creditAlone(c.Imm)
					} else {
						q.credit(c.Imm)
					}
				}
				c.Imm = 0
			}
		}
		n += made
		if n < end {
			break // the batch reached a slot not yet published
		}
	}
	if n < len(crs) {
		for _, q := range j.inboxRQs.load() {
			// Looked at here first: most polls find the inbox empty,
			// and the call alone would cost as much as the look.
			if q.inbox.box.Waiting() {
				k := q.deliverInbox(len(crs)-n, crs[n:])
				j.countErrors(crs[n : n+k])
				n += k
			}
		}
	}
	if n == 0 {
		if j.stalled.any.Load() {
			j.stalled.retry()
		}
		return 0, nil
	}
	j.countPolled(n)
	return n, nil
}

// sweepDue counts a poll and tells whether it is one that looks at the
// inboxes of the send queues that complete here (sweepSenders). One poll
// in inboxPollEvery looks: a look takes the queue's lock and reads lines
// the receiver writes as it delivers (deq, its activity), and a sender
// spinning on its JFC would take them from it on every poll. The count is
// stored plainly: racing pollers may lose a count, which only moves the
// next look.
func (j *jfc) sweepDue() bool {
	n := atomic.LoadUint64(&j.sweeps) + 1
	shm.StoreRelease(&j.sweeps, n)
	return n%inboxPollEvery == 0
}

// sweepSenders completes what the inboxes delivered for the send queues
// that complete here: their records are then in the ring. (The inboxes of
// the receive queues that complete here deliver into the poll's output,
// after the ring's records.)
func (j *jfc) sweepSenders() {
	for _, q := range j.inboxSQs.load() {
		if q.inboxOut() != 0 {
			q.pollInbox()
		}
	}
}

// pollBatch is the most records Poll claims at once.
const pollBatch = 16

// claimRecords consumes the oldest published records of a JFC ring, as many
// as are published in a row and fit in out, with one CAS, and reports how
// many slots it took and how many records it made of them in out (a hole
// left by a dead producer takes a slot and makes none). A send-side
// record carries its request's sequence in Imm. Between the records there
// is no locked instruction, so their lines are asked for together:
// claimed one at a time, each record's line waited for the previous claim,
// and a poller got a record per cross-core transfer. The records are
// copied out before the claim, because once deq moves past a slot its
// producer may write it. alone says that no other poller claims records
// meanwhile (a lock-free JFC): the claim is then a plain store.
func claimRecords(r *shm.Ring, out []provider.CR, alone bool) (took, made int) {
	for {
		pos := atomic.LoadUint64(r.DeqPos())
		took, made = 0, 0
		for made < len(out) {
			p := pos + uint64(took)
			if atomic.LoadUint64(r.Seq(p)) != p+1 {
				break
			}
			took++
			if (*crSlot)(r.Payload(p)).toCR(&out[made]) {
				made++
			}
		}
		if took == 0 {
			if atomic.LoadUint64(r.DeqPos()) != pos {
				continue // another poller took it meanwhile
			}
			return 0, 0
		}
		if alone {
			shm.StoreRelease(r.DeqPos(), pos+uint64(took))
			r.RaceAcquire()
			return took, made
		}
		if atomic.CompareAndSwapUint64(r.DeqPos(), pos, pos+uint64(took)) {
			r.RaceAcquire()
			return took, made
		}
	}
}

// toCR makes c of the record s and reports whether it is one: a hole left
// by a dead producer is not. It reads the slot in place, a word at a
// time: a copy of the slot first would cost a store and a load more per
// word, and a struct copy's 16-byte loads cannot be forwarded from the
// 8-byte stores of a record this core has just written.
func (s *crSlot) toCR(c *provider.CR) bool {
	flags := s.flags()
	if flags&crHole != 0 {
		return false
	}
	// Every field of c is stored on its own (a composite literal would
	// be built in a temporary and copied in stalling wide loads).
	c.Status, c.Flags = provider.CRStatus(uint8(s.kind)), flags
	if flags&provider.CRFlagRecv != 0 {
		c.Opcode, c.WROpcode = provider.CROpcode(uint8(s.kind>>8)), 0
	} else {
		c.Opcode, c.WROpcode = 0, provider.Opcode(uint8(s.kind>>8))
	}
	c.Len, c.UserCtx, c.LocalID = uint32(s.lenLocal), s.userCtx, uint32(s.lenLocal>>32)
	c.RemoteID.UASID, c.RemoteID.ID = uint32(s.ids), uint32(s.ids>>32)
	binary.NativeEndian.PutUint64(c.RemoteID.EID[:8], s.remoteEID[0])
	binary.NativeEndian.PutUint64(c.RemoteID.EID[8:], s.remoteEID[1])
	c.Imm = s.word
	return true
}

func (j *jfc) Rearm(solicitedOnly bool) error {
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if j.jfce == nil {
		return provider.Errorf(provider.ErrInvalid, "jfc has no jfce")
	}
	mode := armedAll
	if solicitedOnly {
		mode = armedSolicited
	}
	// Requests in inboxes complete, and messages are delivered, as a poll
	// would: a record written later raises the event, an inbox message
	// left now would not.
	for _, q := range j.inboxSQs.load() {
		if q.inboxOut() != 0 {
			q.mu.LockOwner() // a poll's (see queueLock)
			if !q.closed.Load() {
				q.settleInbox()
			}
			q.mu.UnlockOwner()
		}
	}
	for _, q := range j.inboxRQs.load() {
		q.deliverInbox(inboxBatch, nil)
	}
	armed := j.view.ring.Meta(metaArmed)
	armed.Store(mode)
	// Records that arrived before the arm would never raise an event: refuse,
	// as urma_rearm_jfc does, so the caller polls them first. So are
	// inbox requests left before the arm, and messages a poll would
	// deliver; a post sees the arm and leaves none after it.
	if n := j.view.ring.Len(); n > 0 || j.inboxBusy() {
		armed.CompareAndSwap(mode, disarmed)
		return provider.ErrUnreadRecords
	}
	return nil
}

// inboxBusy tells whether a poll would find inbox work: a send queue's
// requests to complete, or messages to deliver.
func (j *jfc) inboxBusy() bool {
	for _, q := range j.inboxSQs.load() {
		if q.inboxOut() != 0 {
			return true
		}
	}
	for _, q := range j.inboxRQs.load() {
		if q.deliverable() {
			return true
		}
	}
	return false
}

func (j *jfc) Ack(n int) error {
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if n < 0 || int32(n) > j.events.Load() {
		return provider.Errorf(provider.ErrInvalid, "ack of %d events, %d outstanding", n, j.events.Load())
	}
	j.events.Add(int32(-n))
	return nil
}

func (j *jfc) Modify(count int, period time.Duration) error {
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if count < 0 || period < 0 {
		return provider.Errorf(provider.ErrInvalid, "negative moderation")
	}
	// Loopback completes synchronously; moderation has nothing to coalesce.
	return nil
}

func (j *jfc) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if n := j.users.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfc is used by %d queues", n)
	}
	if n := j.events.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfc has %d unacknowledged completion events", n)
	}
	if err := j.src.Busy(); err != nil {
		return err
	}
	j.ctx.disown(j)
	j.destroy()
	return nil
}

func (j *jfc) rank() int { return objtab.RankJFC }

func (j *jfc) destroy() {
	if j.closed.Swap(true) {
		return
	}
	j.ctx.events.Forget(&j.src)
	if j.jfce != nil {
		j.jfce.drop(j)
	}
	j.view.ring.Close()
	j.ctx.retire(j.stats())
}

// HeldByOthers counts what stops this JFC's records and can be held by
// another process: slots of its ring reserved and not yet published, and,
// for the receive queues that complete into it, inbox cells reserved and
// not yet published and inbox consumer locks held by another process. A
// stopped peer holds them until it runs again or dies (its death frees
// them). It is a diagnostic: the peer-fault tests tell a wait on a stopped
// peer from a hang with it.
func (j *jfc) HeldByOthers() int {
	if j.closed.Load() {
		return 0
	}
	n := len(j.view.ring.HeldReserved())
	for _, q := range j.inboxRQs.load() {
		n += len(q.inbox.box.HeldCells())
		if h := q.inbox.box.Held().Load(); h != 0 && h != selfPID {
			n++
		}
	}
	return n
}
