package loopback

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/internal/qcheck"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// recvSlot is a receive request as it lies in a receive ring, followed by
// nsge recvSGEs. Buffers are named by segment handle and generation, not by
// pointer, so that a sender in another process can resolve them.
type recvSlot struct {
	userCtx uint64
	nsge    uint32
	_       uint32
}

type recvSGE struct {
	addr   uint64
	length uint32
	handle uint32
	gen    uint32
	_      uint32
}

// metaState is the receive ring's meta word holding the queue's state, or
// stateClosed once the queue is gone; senders in any process read it.
const (
	metaState   = 0
	stateClosed = 0xff
)

func recvSlotSize(maxSGE int) uintptr {
	return unsafe.Sizeof(recvSlot{}) + uintptr(maxSGE)*unsafe.Sizeof(recvSGE{})
}

// recvq is the receive side of a JFR or of a Jetty with its own queue.
type recvq struct {
	ctx *lbContext
	// fullErr is the error of a post of receives to the queue while it
	// is full: made once, as a loop that posts faster than the peer
	// sends meets it all the time.
	fullErr     error
	modifyMu    sync.Mutex // one state change at a time
	id          uint32
	maxSGE      int
	depth       int
	mode        provider.TransportMode
	tokenPolicy provider.TokenPolicy
	token       uint32
	jfc         *jfc
	ring        *shm.Ring
	crFlags     provider.CRFlags
	closed      atomic.Bool
	// senders counts senders of this process inside a delivery, and
	// posting the posts of receives under way, so that destroy does not
	// unmap the ring under them. Two counts on lines of their own: every
	// message changes the first and every post the second, and with one
	// count on a line the receiver also wrote, each message of a sender
	// on another core waited twice for that line to come back.
	senders lineCount
	posting lineCount
	// st mirrors the ring's state word where destroy does not unmap it,
	// for the one-sided requests of this process, which check the state
	// without entering the queue.
	st   atomic.Uint32
	view rqView
	// inbox is where senders of this process leave small SENDs (see
	// rqinbox.go).
	inbox *rqInbox
	// limit is where the receive threshold's event goes (rxlimit.go).
	limit rxLimit

	mu      sync.Mutex
	waiters []*sendq // senders in RNR wait on this queue
	// nwaiters is len(waiters), for a post of receives to see without
	// the lock that there is nobody to wake: a lock is two locked
	// instructions, each waiting for the receive's stores to reach the
	// line the sender last read.
	nwaiters atomic.Int32

	// postErrors counts the posts of receives refused (see stats.go).
	postErrors atomic.Uint64
}

// rqView is a receive queue as a sender sees it: in this process (local),
// or mapped from a peer process.
type rqView struct {
	id      uint32
	maxSGE  int
	ring    *shm.Ring
	jfc     *jfcView
	crFlags provider.CRFlags
	local   *recvq
	peer    *peerConn
	inbox   *rqInbox // nil: a peer that gave none
	// rxLimit is the ring's metaRxLimit word (see noteTaken).
	rxLimit *atomic.Uint32
}

func (c *lbContext) newRecvq(cfg provider.JFRConfig) (*recvq, error) {
	if err := qcheck.Recv(&cfg, &queueLimits, DeviceName); err != nil {
		return nil, err
	}
	j, err := c.ownJFC(cfg.JFC)
	if err != nil {
		return nil, err
	}
	r, err := shm.NewRing("jfr", cfg.Depth, recvSlotSize(cfg.MaxSGE))
	if err != nil {
		return nil, err
	}
	ib, err := newRQInbox(cfg.Depth)
	if err != nil {
		r.Close()
		return nil, err
	}
	q := &recvq{ctx: c, maxSGE: cfg.MaxSGE, depth: cfg.Depth, mode: cfg.Mode, tokenPolicy: cfg.TokenPolicy,
		token: cfg.Token, jfc: j, ring: r, inbox: ib}
	q.fullErr = provider.Errorf(provider.ErrAgain, "jfr is full (depth %d)", q.depth)
	q.setState(uint32(provider.StateReady))
	q.ring.Meta(metaRxLimit).Store(uint32(cfg.RxThreshold))
	j.users.Add(1)
	j.inboxRQs.add(q)
	return q, nil
}

// setID gives the queue its id, once its JFR or Jetty has one.
func (q *recvq) setID(id uint32) {
	q.id = id
	q.view = rqView{id: id, maxSGE: q.maxSGE, ring: q.ring, jfc: &q.jfc.view, crFlags: q.crFlags, local: q, inbox: q.inbox,
		rxLimit: q.ring.Meta(metaRxLimit)}
}

func (q *recvq) state() *atomic.Uint32 { return q.ring.Meta(metaState) }

func (q *recvq) setState(s uint32) {
	q.st.Store(s)
	q.state().Store(s)
}

// enter and leave bracket a delivery by a sender of this process (a post of
// receives counts in posting).
func (q *recvq) enter() bool { return q.senders.enter(&q.closed) }

func (q *recvq) leave() { q.senders.leave() }

// lineCount is a count of callers inside a section that a close waits
// out, alone on its cache line.
type lineCount struct {
	_ [64]byte
	n atomic.Int32
	_ [60]byte
}

// leave counts the caller out.
func (c *lineCount) leave() { c.n.Add(-1) }

// enter counts the caller in, unless closed is set: then it returns
// false, counted out again. A close sets closed before it waits for the
// count to drop to zero, so one of the two sees the other.
func (c *lineCount) enter(closed *atomic.Bool) bool {
	c.n.Add(1)
	if closed.Load() {
		c.n.Add(-1)
		return false
	}
	return true
}

// ownJFC checks that a JFC belongs to this context and is open.
func (c *lbContext) ownJFC(p provider.JFC) (*jfc, error) {
	j, ok := p.(*jfc)
	if !ok || j == nil || j.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "jfc missing or of another context")
	}
	if j.closed.Load() {
		return nil, errClosed("jfc")
	}
	return j, nil
}

// sges returns the buffers of the receive request in slot pos.
func (v *rqView) sges(pos uint64) []recvSGE {
	p := v.ring.Payload(pos)
	s := (*recvSlot)(p)
	n := min(int(s.nsge), v.maxSGE)
	return unsafe.Slice((*recvSGE)(unsafe.Add(p, unsafe.Sizeof(recvSlot{}))), v.maxSGE)[:n]
}

func (q *recvq) postRecv(wrs []provider.RecvWR) (int, error) {
	if err := q.beginPosts(); err != nil {
		q.postErrors.Add(1)
		return 0, err
	}
	// Checked first, then written in chunks: one claim of ring slots per
	// chunk (see ReserveUpTo).
	valid, verr := q.checkRecvs(wrs)
	done, err := 0, verr
	for done < valid {
		pos, got, ferr := q.reserveRecvs(valid - done)
		if ferr != nil {
			err = ferr
			break
		}
		q.writeRecvs(pos, wrs[done:done+got])
		done += got
	}
	q.endPosts()
	if err != nil {
		q.postErrors.Add(1)
		return done, err
	}
	return len(wrs), nil
}

// beginPosts enters a post of receives: inside it, a Close that runs
// meanwhile waits before it unmaps the ring the post writes. It refuses a
// queue that is closed or not READY; endPosts ends a post it let in.
func (q *recvq) beginPosts() error {
	if !q.posting.enter(&q.closed) {
		return errClosed("jfr")
	}
	switch st := q.state().Load(); {
	case st == stateClosed:
		// Closed after enter looked: a post racing Close reports the
		// Close, not the state word it leaves behind.
		q.posting.leave()
		return errClosed("jfr")
	case provider.State(st) != provider.StateReady:
		q.posting.leave()
		return provider.Errorf(provider.ErrBadState, "jfr is %v", provider.State(st))
	}
	return nil
}

// reserveRecvs claims up to n free slots of the ring for receives: the
// first and how many, at least one, or the error of a full queue.
func (q *recvq) reserveRecvs(n int) (uint64, int, error) {
	for {
		pos, got := q.ring.ReserveUpTo(n)
		if got > 0 {
			return pos, got, nil
		}
		if !q.ring.AwaitRelease() {
			return 0, 0, q.fullErr
		}
	}
}

// endPosts ends a post of receives that beginPosts let in, once its
// receives are published.
func (q *recvq) endPosts() {
	q.wakeSenders()
	// Messages may wait in the inbox for these receives. The next poll
	// delivers them; a JFC armed meanwhile (its Rearm saw no receive for
	// them) is told now. As urgent: one of them may be solicited.
	q.inbox.box.Bump()
	if q.inbox.box.Waiting() {
		q.jfc.view.notify(true)
	}
	q.posting.leave()
}

// checkRecvs checks the receive requests of a post, and returns how many
// of them, from the first, passed, and the error of the one after them.
// The checks of a list are one loop, with the common case inline: an SGE
// naming the segment the last one named, or a live segment of this
// context, and a range inside it. Errors are built by checkRecv.
func (q *recvq) checkRecvs(wrs []provider.RecvWR) (int, error) {
	var last *segment
	var lastWords ifaceWords
	for i := range wrs {
		w := &wrs[i]
		ok := len(w.Local) <= q.maxSGE
		for k := 0; ok && k < len(w.Local); k++ {
			l := &w.Local[k]
			s := last
			if s == nil || !same(&l.Seg, &lastWords) {
				if s = asSegment(l.Seg); s == nil || s.ctx != q.ctx || s.closed.Load() {
					ok = false
					break
				}
				s.noteReceive(q.id)
				last, lastWords = s, wordsOf(&l.Seg)
			}
			ok = wrcheck.Inside(l, s.desc.VA, s.desc.Len)
		}
		if !ok {
			if err := q.checkRecv(w); err != nil {
				return i, err
			}
		}
	}
	return len(wrs), nil
}

// checkRecv checks a receive request before it is posted, and returns why
// it is refused.
func (q *recvq) checkRecv(w *provider.RecvWR) error {
	if len(w.Local) > q.maxSGE {
		return provider.Errorf(provider.ErrInvalid, "%d sges, jfr allows %d", len(w.Local), q.maxSGE)
	}
	for k := range w.Local {
		s, err := q.ctx.localSeg(w.Local[k].Seg)
		if err != nil {
			return err
		}
		if err := wrcheck.InSegment(&w.Local[k], s.desc.VA, s.desc.Len); err != nil {
			return err
		}
		s.noteReceive(q.id)
	}
	return nil
}

// writeRecvs fills the reserved slots from pos on with wrs, checked by
// checkRecvs, and publishes them.
func (q *recvq) writeRecvs(pos uint64, wrs []provider.RecvWR) {
	r := q.ring
	for i := range wrs {
		w := &wrs[i]
		p := r.Payload(pos)
		// Field by field: a literal stored through a pointer is built
		// in a temporary and copied in wide loads, which wait for every
		// earlier store when they cannot be forwarded from the
		// narrower ones that built it.
		rs := (*recvSlot)(p)
		rs.userCtx, rs.nsge = w.UserCtx, uint32(len(w.Local))
		d := (*recvSGE)(unsafe.Add(p, unsafe.Sizeof(recvSlot{})))
		for k := range w.Local {
			// checkRecvs found it a live segment of this context; if
			// it closes meanwhile, its generation stops matching and
			// the sender finds the buffer gone, as after any later
			// close. At most maxSGE of them: the slot has room.
			l := &w.Local[k]
			s := asSegment(l.Seg)
			d.addr, d.length, d.handle, d.gen = l.Addr, l.Len, s.handle, s.ref.gen
			d = (*recvSGE)(unsafe.Add(unsafe.Pointer(d), unsafe.Sizeof(recvSGE{})))
		}
		r.Publish(pos)
		pos++
	}
}

// wakeSenders lets senders of this process waiting for a receive retry now
// rather than at their next RNR timer tick. Senders in other processes
// retry on their timer, or when their JFC is polled (stalledQueues).
func (q *recvq) wakeSenders() {
	// A sender that adds itself after this load waits for its RNR timer,
	// as one that adds itself after the lock below would.
	if q.nwaiters.Load() == 0 {
		return
	}
	q.mu.Lock()
	if len(q.waiters) == 0 {
		q.mu.Unlock()
		return
	}
	// Copied out so that the waiters' array is kept for the next RNR
	// wait: a sender outpacing its receiver waits again and again.
	var buf [4]*sendq
	ws := append(buf[:0], q.waiters...)
	clear(q.waiters)
	q.waiters = q.waiters[:0]
	q.nwaiters.Store(0)
	q.mu.Unlock()
	for _, s := range ws {
		s.kick()
	}
}

func (q *recvq) addWaiter(s *sendq) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, x := range q.waiters {
		if x == s {
			return
		}
	}
	q.waiters = append(q.waiters, s)
	q.nwaiters.Store(int32(len(q.waiters)))
}

func (q *recvq) query() (provider.QueueAttr, error) {
	if q.closed.Load() {
		return provider.QueueAttr{}, errClosed("jfr")
	}
	return provider.QueueAttr{ID: q.ctx.jettyID(q.id), State: provider.State(q.state().Load()), Mode: q.mode,
		Depth: q.depth, Outstanding: q.ring.Len()}, nil
}

// modify moves the queue to s: ERROR from any state, RESET from ERROR,
// READY from RESET, as a verbs receive queue moves. Leaving READY flushes
// the queue, as a receive queue in error is flushed: each posted receive
// completes with WR_FLUSH_ERR, in posting order, and the messages waiting
// in its inbox fail at their senders with REM_ACCESS_ABORT_ERR. Nothing
// posted before the change is left for a message after the queue is READY
// again.
func (q *recvq) modify(s provider.State) error {
	if q.closed.Load() {
		return errClosed("jfr")
	}
	q.modifyMu.Lock()
	defer q.modifyMu.Unlock()
	was := provider.State(q.st.Load())
	switch {
	case s == provider.StateError:
	case s == provider.StateReset && (was == provider.StateError || was == provider.StateReset):
	case s == provider.StateReady && (was == provider.StateReset || was == provider.StateReady):
	case s == provider.StateReset || s == provider.StateReady:
		return provider.Errorf(provider.ErrBadState, "jfr %v -> %v: a receive queue goes ERROR -> RESET -> READY", was, s)
	default:
		return provider.Errorf(provider.ErrInvalid, "jfr state %v", s)
	}
	q.setState(uint32(s))
	if was == provider.StateReady && s != provider.StateReady {
		// Posts that saw READY finish before the flush, and new ones see
		// the state: none is left behind it.
		for q.posting.n.Load() > 0 {
			runtime.Gosched()
		}
		q.endInbox(false)
		q.flushPosted()
	}
	return nil
}

func (q *recvq) destroy() {
	if q.closed.Swap(true) {
		return
	}
	// Peers that map the ring see the queue gone; senders of this process
	// finish their delivery before the ring is unmapped.
	q.setState(stateClosed)
	q.jfc.inboxRQs.remove(q)
	for q.senders.n.Load() > 0 || q.posting.n.Load() > 0 {
		runtime.Gosched()
	}
	q.failInbox()
	q.flushPosted()
	q.jfc.users.Add(-1)
	q.ctx.retire(q.statsOpen())
	q.ring.Close()
	q.inbox.unref()
}

// flushPosted completes the receives still posted as flushed, in posting
// order, so that the caller hears of each (and a view it named is
// released). A sender of another process that claimed one before the
// queue closed completes it instead; claims are exclusive, so each
// receive completes once either way.
func (q *recvq) flushPosted() {
	if q.jfc.closed.Load() {
		return // nobody to tell, and its ring is gone
	}
	for {
		pos, ok := q.ring.Claim()
		if !ok {
			return
		}
		cr := provider.CR{Status: provider.CRWRFlushErr, Opcode: provider.CROpSend, Flags: provider.CRFlagRecv | q.crFlags,
			UserCtx: (*recvSlot)(q.ring.Payload(pos)).userCtx, LocalID: q.id}
		q.ring.Release(pos)
		q.jfc.view.push(&cr, 0)
	}
}

// endpoint is what an import finds: a JFR, or a Jetty and its receive queue.
type endpoint struct {
	desc  provider.JettyDesc
	token uint32
	rq    *recvq
	jetty *jettyObj
}

type jfrObj struct {
	*recvq
	ep      *endpoint
	src     asyncq.Source
	sharers atomic.Int32
}

func (c *lbContext) NewJFR(cfg provider.JFRConfig) (provider.JFR, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	q, err := c.newRecvq(cfg)
	if err != nil {
		return nil, err
	}
	j := &jfrObj{recvq: q}
	j.src.Owner = cfg.Owner
	if j.src.Owner == nil {
		j.src.Owner = j
	}
	q.limit = rxLimit{ev: provider.EventJFRLimit, src: &j.src}
	id, err := c.adopt(j)
	if err != nil {
		q.destroy()
		return nil, err
	}
	q.setID(id)
	j.ep = &endpoint{desc: provider.JettyDesc{ID: c.jettyID(id), Kind: provider.KindJFR, Mode: cfg.Mode,
		TokenPolicy: cfg.TokenPolicy}, token: cfg.Token, rq: q}
	c.addEndpoint(j.ep)
	return j, nil
}

func (c *lbContext) addEndpoint(ep *endpoint) {
	c.mu.Lock()
	c.recvqs[ep.desc.ID.ID] = ep
	c.mu.Unlock()
}

func (c *lbContext) removeEndpoint(id uint32) {
	c.mu.Lock()
	delete(c.recvqs, id)
	c.mu.Unlock()
}

// findEndpoint checks an import request against the JFR or Jetty it names.
func (c *lbContext) findEndpoint(desc provider.JettyDesc, token uint32) (*endpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.findEndpointLocked(desc, token)
}

func (c *lbContext) findEndpointLocked(desc provider.JettyDesc, token uint32) (*endpoint, error) {
	ep := c.recvqs[desc.ID.ID]
	if ep == nil || ep.desc.Kind != desc.Kind {
		return nil, provider.Errorf(provider.ErrNotFound, "no %v with id %d", desc.Kind, desc.ID.ID)
	}
	if ep.desc != desc {
		return nil, provider.Errorf(provider.ErrInvalid, "descriptor does not match %v", ep.desc)
	}
	if ep.desc.TokenPolicy != provider.TokenNone && ep.token != token {
		return nil, provider.Errorf(provider.ErrPermission, "wrong token for %v %d", desc.Kind, desc.ID.ID)
	}
	return ep, nil
}

func (j *jfrObj) PostRecv(wrs []provider.RecvWR) (int, error) { return j.postRecv(wrs) }
func (j *jfrObj) Desc() provider.JettyDesc                    { return j.ep.desc }
func (j *jfrObj) Query() (provider.QueueAttr, error)          { return j.query() }
func (j *jfrObj) Modify(s provider.State) error               { return j.modify(s) }

func (j *jfrObj) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if j.closed.Load() {
		return errClosed("jfr")
	}
	if n := j.sharers.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfr is shared by %d jetties", n)
	}
	if err := j.src.Busy(); err != nil {
		return err
	}
	j.ctx.disown(j)
	j.destroy()
	return nil
}

func (j *jfrObj) rank() int { return objtab.RankRecv }

func (j *jfrObj) destroy() {
	j.ctx.removeEndpoint(j.id)
	j.ctx.events.Forget(&j.src)
	j.recvq.destroy()
}

// localSeg resolves an SGE's segment to a live segment of this context.
func (c *lbContext) localSeg(m provider.MemRef) (*segment, error) {
	s := asSegment(m)
	if s == nil {
		return nil, provider.Errorf(provider.ErrInvalid, "sge does not name a local loopback segment")
	}
	if s.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "sge names a segment of another context")
	}
	if s.closed.Load() {
		return nil, errClosed("local segment")
	}
	return s, nil
}
