package loopback

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
)

// Other processes write this context's rings directly: they push records
// into its JFCs and take receives from its JFRs. A process killed between
// taking a ring slot and handing it back leaves the slot held for ever: a
// JFC would hide every record after it (its Poll and Wait would never see
// another), and a JFR could never take a receive in that slot again. A
// running process holds a slot for nanoseconds, so when an importer's
// connection ends the context notes the held slots, waits repairGrace, and
// repairs those held still, unless a process connected to it is stopped
// (SIGSTOP), which may hold a slot it will finish: then it waits again.
//
// What cannot be repaired: a sender that died after handing a receive back
// and before pushing its record loses that receive without a trace.
const repairGrace = 2 * time.Second

// heldSlot is a slot found held, with the object whose ring it is in.
type heldSlot struct {
	jfc   *jfc   // a JFC slot reserved and not published
	rq    *recvq // or a receive claimed and not released
	inbox *recvq // or a cell of its inbox reserved and not published
	pos   uint64
}

// scheduleRepair is called when an importer's connection ends.
func (c *lbContext) scheduleRepair() {
	held := c.heldSlots()
	if len(held) == 0 && !c.inboxesShared() {
		return
	}
	time.AfterFunc(repairGrace, func() { c.repair(held) })
}

// inboxesShared tells whether another process holds something in the
// inboxes of the context's queues, a consumer lock or a route, that the
// repair frees if the process is gone.
func (c *lbContext) inboxesShared() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	me := selfPID
	for _, q := range c.ownRecvqsLocked() {
		ib := q.inbox
		if h := ib.box.Held().Load(); h != 0 && h != me {
			return true
		}
		for i := range ib.routes {
			if o := atomic.LoadUint64(&ib.routes[i].Owner); o != 0 && uint32(o>>32) != me {
				return true
			}
		}
	}
	return false
}

// ownRecvqsLocked lists the open receive queues of the context's JFRs and
// Jetties; c.mu is held.
func (c *lbContext) ownRecvqsLocked() []*recvq {
	var qs []*recvq
	for kid := range c.children.All() {
		var q *recvq
		switch o := kid.(type) {
		case *jfrObj:
			q = o.recvq
		case *jettyObj:
			if o.shared == nil {
				q = o.rq
			}
		}
		if q != nil && !q.closed.Load() {
			qs = append(qs, q)
		}
	}
	return qs
}

// heldSlots lists the held slots of the context's own JFCs and JFRs. It
// runs under c.mu: an object is closed only after its context lets go of
// it (disown), so its ring stays mapped meanwhile.
func (c *lbContext) heldSlots() []heldSlot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heldSlotsLocked()
}

func (c *lbContext) heldSlotsLocked() []heldSlot {
	var held []heldSlot
	for kid := range c.children.All() {
		switch o := kid.(type) {
		case *jfc:
			if !o.closed.Load() {
				for _, p := range o.view.ring.HeldReserved() {
					held = append(held, heldSlot{jfc: o, pos: p})
				}
			}
		case *jfrObj:
			held = appendClaimed(held, o.recvq)
		case *jettyObj:
			if o.shared == nil {
				held = appendClaimed(held, o.rq)
			}
		}
	}
	return held
}

func appendClaimed(held []heldSlot, q *recvq) []heldSlot {
	if q == nil || q.closed.Load() {
		return held
	}
	for _, p := range q.ring.HeldClaimed() {
		held = append(held, heldSlot{rq: q, pos: p})
	}
	for _, p := range q.inbox.box.HeldCells() {
		held = append(held, heldSlot{inbox: q, pos: p})
	}
	return held
}

// repair fixes the slots of held that are held still.
func (c *lbContext) repair(held []heldSlot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return
	}
	if c.srv.anyStopped() {
		time.AfterFunc(repairGrace, func() { c.repair(held) })
		return
	}
	c.repairInboxesLocked()
	now := map[heldSlot]bool{}
	for _, h := range c.heldSlotsLocked() {
		now[h] = true
	}
	for _, h := range held {
		if !now[h] {
			continue // finished, or its object went away
		}
		if h.jfc != nil {
			r := h.jfc.view.ring
			*(*crSlot)(r.Payload(h.pos)) = crSlot{kind: uint64(crHole) << 16}
			r.Publish(h.pos)
			continue
		}
		if h.inbox != nil {
			h.inbox.inbox.box.Hole(h.pos)
			continue
		}
		// The sender died with the message half written: the receive
		// comes back flushed, and its slot can be posted again.
		r := h.rq.ring
		cr := provider.CR{Status: provider.CRWRFlushErr, Opcode: provider.CROpSend, Flags: provider.CRFlagRecv | h.rq.crFlags,
			UserCtx: (*recvSlot)(r.Payload(h.pos)).userCtx, LocalID: h.rq.id}
		r.Release(h.pos)
		h.rq.jfc.view.push(&cr, 0)
	}
}

// repairInboxesLocked frees what processes that died hold in the inboxes of
// the context's queues: the consumer lock (a sender that died helping;
// deq is past every message it delivered but the one it was on), and
// routes (their messages left are skipped).
func (c *lbContext) repairInboxesLocked() {
	for _, q := range c.ownRecvqsLocked() {
		ib := q.inbox
		if h, dead := ib.box.DeadHolder(selfPID); dead {
			ib.box.Held().CompareAndSwap(h, 0)
		}
		for i := range ib.routes {
			rt := &ib.routes[i]
			o := atomic.LoadUint64(&rt.Owner)
			if o == 0 || inbox.Alive(int(o>>32)) || !ib.box.Lock(selfPID, nil) {
				continue
			}
			rt.Reset(ib.box)
			atomic.CompareAndSwapUint64(&rt.Owner, o, 0)
			ib.box.Unlock()
		}
	}
}

// stopped reports whether process pid is stopped (by a signal or a tracer).
func stopped(pid int32) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and
	// may itself hold spaces or parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] == 'T' || s[i+2] == 't'
}
