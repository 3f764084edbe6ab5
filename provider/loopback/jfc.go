package loopback

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// crSlot is a completion record as it lies in a JFC ring: plain integers
// only. qid and sqSeq tell the poller which send queue slots to free.
type crSlot struct {
	userCtx     uint64
	imm         uint64
	sqSeq       uint64
	remoteEID   [16]byte
	remoteUASID uint32
	remoteID    uint32
	length      uint32
	localID     uint32
	qid         uint32
	status      uint8
	opcode      uint8
	flags       uint8
}

const (
	disarmed int32 = iota
	armedAll
	armedSolicited
)

type jfc struct {
	ctx   *lbContext
	id    uint32
	depth int
	ring  *ring
	jfce  *jfce
	src   eventSource

	armed      atomic.Int32
	events     atomic.Int32 // delivered by Wait, not yet acked
	users      atomic.Int32 // queues completing into this JFC
	overflowed atomic.Bool
	closed     atomic.Bool
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
	r, err := newRing("jfc", cfg.Depth, unsafe.Sizeof(crSlot{}))
	if err != nil {
		return nil, err
	}
	j := &jfc{ctx: c, depth: cfg.Depth, ring: r, jfce: e}
	j.src.owner = cfg.Owner
	if j.src.owner == nil {
		j.src.owner = j
	}
	if j.id, err = c.adopt(j); err != nil {
		r.close()
		return nil, err
	}
	if e != nil {
		e.users.Add(1)
	}
	return j, nil
}

func (j *jfc) Depth() int { return j.depth }

// push adds a record. It is called by whichever goroutine completed the
// request, on the initiator's or the target's side.
func (j *jfc) push(cr *provider.CR, qid uint32, sqSeq uint64) {
	if j.closed.Load() {
		return
	}
	pos, ok := j.ring.reserve()
	if !ok {
		if !j.overflowed.Swap(true) {
			j.ctx.events.raise(provider.EventJFCErr, &j.src)
		}
		return
	}
	s := (*crSlot)(j.ring.payload(pos))
	*s = crSlot{userCtx: cr.UserCtx, imm: cr.Imm, sqSeq: sqSeq, remoteEID: cr.RemoteID.EID,
		remoteUASID: cr.RemoteID.UASID, remoteID: cr.RemoteID.ID, length: cr.Len, localID: cr.LocalID,
		qid: qid, status: uint8(cr.Status), opcode: uint8(cr.Opcode), flags: uint8(cr.Flags)}
	j.ring.publish(pos)
	if j.jfce != nil {
		if mode := j.armed.Load(); mode != disarmed {
			wanted := mode == armedAll || cr.Status != provider.CRSuccess || cr.Flags&provider.CRFlagSolicited != 0
			if wanted && j.armed.CompareAndSwap(mode, disarmed) {
				j.jfce.signal(j)
			}
		}
	}
}

func (j *jfc) Poll(crs []provider.CR) (int, error) {
	if j.closed.Load() {
		return 0, errClosed("jfc")
	}
	n := 0
	for n < len(crs) {
		pos, ok := j.ring.claim()
		if !ok {
			break
		}
		s := (*crSlot)(j.ring.payload(pos))
		crs[n] = provider.CR{Status: provider.CRStatus(s.status), Opcode: provider.Opcode(s.opcode),
			Flags: provider.CRFlags(s.flags), Len: s.length, UserCtx: s.userCtx, LocalID: s.localID,
			RemoteID: provider.JettyID{EID: s.remoteEID, UASID: s.remoteUASID, ID: s.remoteID}, Imm: s.imm}
		qid, seq := s.qid, s.sqSeq
		j.ring.release(pos)
		if seq != 0 {
			if q := j.ctx.sendqByID(qid); q != nil {
				q.credit(seq)
			}
		}
		n++
	}
	return n, nil
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
	j.armed.Store(mode)
	// Records that arrived before the arm would never raise an event: refuse,
	// as urma_rearm_jfc does, so the caller polls them first.
	if j.ring.count() > 0 {
		j.armed.CompareAndSwap(mode, disarmed)
		return provider.Errorf(provider.ErrAgain, "jfc has %d unread records; poll them first", j.ring.count())
	}
	return nil
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
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if n := j.users.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfc is used by %d queues", n)
	}
	if n := j.events.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfc has %d unacknowledged completion events", n)
	}
	if err := j.src.busy(); err != nil {
		return err
	}
	j.ctx.disown(j)
	j.destroy()
	return nil
}

func (j *jfc) destroy() {
	if j.closed.Swap(true) {
		return
	}
	j.ctx.events.forget(&j.src)
	if j.jfce != nil {
		j.jfce.drop(j)
		j.jfce.users.Add(-1)
	}
	j.ring.close()
}

// jfce is a completion event channel: a list of JFCs with events and a
// wake-up channel for Wait.
type jfce struct {
	ctx    *lbContext
	mu     sync.Mutex
	ready  []*jfc
	wake   chan struct{}
	users  atomic.Int32
	closed atomic.Bool
}

func (c *lbContext) NewJFCE() (provider.JFCE, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	e := &jfce{ctx: c, wake: make(chan struct{}, 1)}
	if _, err := c.adopt(e); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *jfce) signal(j *jfc) {
	e.mu.Lock()
	e.ready = append(e.ready, j)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *jfce) drop(j *jfc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := e.ready[:0]
	for _, x := range e.ready {
		if x != j {
			kept = append(kept, x)
		}
	}
	e.ready = kept
}

func (e *jfce) take(out []any) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for n < len(out) && len(e.ready) > 0 {
		j := e.ready[0]
		e.ready = e.ready[1:]
		j.events.Add(1)
		out[n] = j.src.owner
		n++
	}
	if len(e.ready) > 0 {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	return n
}

func (e *jfce) Wait(timeout time.Duration, out []any) (int, error) {
	if e.closed.Load() {
		return 0, errClosed("jfce")
	}
	if len(out) == 0 {
		return 0, provider.Errorf(provider.ErrInvalid, "empty output")
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	for {
		if n := e.take(out); n > 0 {
			return n, nil
		}
		if timeout == 0 {
			return 0, provider.Errorf(provider.ErrTimeout, "no completion event")
		}
		select {
		case <-e.wake:
		case <-deadline:
			if n := e.take(out); n > 0 {
				return n, nil
			}
			return 0, provider.Errorf(provider.ErrTimeout, "no completion event within %v", timeout)
		}
		if e.closed.Load() {
			return 0, errClosed("jfce")
		}
	}
}

func (e *jfce) Close() error {
	if e.closed.Load() {
		return errClosed("jfce")
	}
	if n := e.users.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfce is used by %d jfcs", n)
	}
	e.ctx.disown(e)
	e.destroy()
	return nil
}

func (e *jfce) destroy() {
	if e.closed.Swap(true) {
		return
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
