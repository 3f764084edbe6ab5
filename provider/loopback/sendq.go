package loopback

import (
	"context"
	"encoding/binary"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/internal/qcheck"
	"github.com/urma-go/sdk/provider/internal/rules"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// pendingWR is a request that could not run yet (its target had no receive)
// or that waits behind one; it owns copies of the caller's SGEs and inline
// data, since Post keeps no reference to the caller's slices.
type pendingWR struct {
	wr  provider.WR
	seq uint64
	rem *remote
	sge [maxSGE]provider.SGE
	buf []byte
}

// sendq is the send side of a JFS or a Jetty. Requests run synchronously in
// Post when nothing waits ahead of them; the mutex guards only this queue.
type sendq struct {
	ctx        *lbContext
	id         uint32
	mode       provider.TransportMode
	depth      int
	maxSGE     int
	maxInline  int
	rnrRetry   int
	rnrTimeout time.Duration
	jfc        *jfc
	jetty      *jettyObj // nil for a JFS
	limits     wrcheck.Limits
	src        asyncq.Source
	closed     atomic.Bool
	// credited is the highest sequence whose slot is free again; read
	// with loadCredited.
	credited uint64

	mu      queueLock
	state   provider.State
	head    uint64 // sequence of the last accepted request
	pending []*pendingWR
	// free keeps finished pendingWRs (and their inline buffers) for reuse,
	// so that a sender waiting on receives (RNR) allocates nothing.
	free    []*pendingWR
	retries int
	timer   *time.Timer
	// sg holds the resolved local and remote lists of the request that
	// exec runs.
	sg [2]sg.List
	// inboxRun holds the data of a post list's run of inbox SENDs while it is
	// gathered (postInboxRun); made at the first run.
	inboxRun *inboxRunData
	// run holds the messages of a run of SENDs (see postRun), made on the
	// first one.
	run *[maxRun]runMsg
	// lastRemote is the remote the last request that named one resolved
	// to: a loop that posts to one peer checks it in full once (see
	// target).
	lastRemote *remote
	// ib holds the queue's requests left in an inbox, and ibOut counts
	// them for polls and arms that look without the lock (see inboxOut).
	ib    inboxSends
	ibOut uint64
	// memo is the last single request Post checked in full (postMemo).
	memo postMemo
	// fullErr is the error of a post to the queue while it is full, made
	// at the first (errFull).
	fullErr error

	// errorSuspend makes fail suspend the queue (suspend.go).
	errorSuspend bool
	// inboxMin is the number of requests the queue must have
	// outstanding to use an inbox: inboxStream, or never for a queue
	// that suspends on an error, which keeps the requests after the
	// failed one to run them again, where an inbox skips them and
	// their data with them. A field rather than a second test: every
	// small SEND asks.
	inboxMin uint64
	// stats are the queue's counters beyond head (the requests accepted),
	// written and read under mu (see stats.go).
	stats sendStats
}

func (c *lbContext) newSendq(cfg provider.JFSConfig) (*sendq, error) {
	if err := qcheck.Send(&cfg, &queueLimits, DeviceName); err != nil {
		return nil, err
	}
	j, err := c.ownJFC(cfg.JFC)
	if err != nil {
		return nil, err
	}
	q := &sendq{ctx: c, mode: cfg.Mode, depth: cfg.Depth, maxSGE: cfg.MaxSGE, maxInline: cfg.MaxInline,
		rnrRetry: cfg.RNRRetry, rnrTimeout: cfg.RNRTimeout, jfc: j, state: provider.StateReady,
		errorSuspend: cfg.ErrorSuspend, inboxMin: inboxStream}
	if q.errorSuspend {
		q.inboxMin = math.MaxUint64
	}
	if cfg.LockFree {
		q.mu.lockFree()
	}
	if q.maxInline == 0 {
		q.maxInline = maxInline
	}
	if q.rnrTimeout == 0 {
		q.rnrTimeout = time.Millisecond
	}
	q.limits = wrcheck.Limits{Device: DeviceName, Mode: q.mode, MaxSGE: q.maxSGE, MaxInline: q.maxInline,
		MaxReadSGE: q.maxSGE, MaxMsgSize: maxMsgSize, AtomicOps: loopbackAtomics, ImmData: true,
		SendInvalidate: true, WriteNotify: true}
	q.src.Owner = cfg.Owner
	j.users.Add(1)
	return q, nil
}

func (q *sendq) name() string {
	if q.jetty != nil {
		return "jetty"
	}
	return "jfs"
}

// credit frees the slots up to seq; called by the JFC poller.
func (q *sendq) credit(seq uint64) {
	for {
		c := atomic.LoadUint64(&q.credited)
		if seq <= c || atomic.CompareAndSwapUint64(&q.credited, c, seq) {
			return
		}
	}
}

// creditAlone is credit for the poller of a lock-free JFC, the queue's
// only one at the time: its records come in the order of their requests,
// so seq is the highest yet, and a plain store publishes it without the
// CAS that concurrent pollers need (crediting out of order, they would
// otherwise move it back).
func (q *sendq) creditAlone(seq uint64) { shm.StoreRelease(&q.credited, seq) }

// loadCredited is the highest sequence whose slot is free again.
func (q *sendq) loadCredited() uint64 { return atomic.LoadUint64(&q.credited) }

func (q *sendq) Post(wrs []provider.WR) (int, error) {
	// lockOpen's common way, inline (see lockOpenAfter).
	locked := !q.closed.Load() && q.mu.TryLockOwner()
	if !locked || q.closed.Load() {
		if err := q.lockOpenAfter(locked); err != nil {
			return 0, err
		}
	}
	// Not deferred, as in prepared.Post: a deferred unlock costs every
	// post a closure's setup and a call.
	var n int
	var err error
	switch {
	case len(wrs) != 1:
		n, err = q.postLocked(wrs)
		q.countPost(wrs[:n], err)
	case q.memo.fits(&wrs[0]):
		n, err = q.memo.post(&wrs[0])
		// Its data is the memo's: in one SGE or inline.
		q.countOne(n, err, int(q.memo.llen)+q.memo.inlineLen)
	default:
		n, err = q.postLearn(&wrs[0])
		q.countPost(wrs[:n], err)
	}
	q.mu.UnlockOwner()
	return n, err
}

// postLearn is postLocked of the one request w, which does not fit the
// memo (postMemo): checked in full, and then kept as the memo.
func (q *sendq) postLearn(w *provider.WR) (int, error) {
	n, err := q.postLocked(unsafe.Slice(w, 1))
	if n == 1 {
		q.learn(w)
	}
	return n, err
}

// lockOpen takes the queue's lock for a post (as its owner, see
// queueLock; UnlockOwner lets it go), unless the queue is closed.
func (q *sendq) lockOpen() error {
	if q.closed.Load() {
		return errClosed(q.name())
	}
	q.mu.LockOwner()
	if q.closed.Load() {
		// Closed while this post waited for the lock: destroy has
		// flushed what was pending and nothing would report a request
		// queued now.
		q.mu.UnlockOwner()
		return errClosed(q.name())
	}
	return nil
}

// lockOpenAfter is lockOpen after a post's inline try, which took the lock
// (locked) and then saw the queue closed, or did not take it: a post's
// common way, a free lock of an open queue, makes no call.
func (q *sendq) lockOpenAfter(locked bool) error {
	if locked {
		q.mu.UnlockOwner()
		return errClosed(q.name())
	}
	return q.lockOpen()
}

// postLocked is Post under the queue's lock, once the queue is known open.
func (q *sendq) postLocked(wrs []provider.WR) (int, error) {
	if q.state != provider.StateReady {
		return 0, provider.Errorf(provider.ErrBadState, "%s is %v", q.name(), q.state)
	}
	for i := 0; i < len(wrs); i++ {
		w := &wrs[i]
		// A small SEND may go to an inbox behind the queue's earlier
		// ones; anything else comes after them (clearInbox).
		small := inboxShaped(w)
		if (!small || q.inboxOut() == 0) && q.clearInbox() {
			if n := q.postRun(wrs[i:]); n > 0 {
				i += n - 1
				continue
			}
		}
		rem, err := q.validate(w)
		if err != nil {
			return i, err
		}
		if small {
			if n := q.postInboxRun(wrs[i:], rem); n > 0 {
				i += n - 1
				continue
			}
		}
		if err := q.full(); err != nil {
			return i, err
		}
		q.head++
		if small && q.postSmall(w, rem) {
			continue
		}
		ran := q.clearInbox() && q.state == provider.StateReady
		if ran && !q.exec(w, q.head, rem) {
			continue
		}
		q.wait(w, rem, ran)
	}
	return len(wrs), nil
}

// postSmall leaves the small SEND w, just accepted, in its target's inbox
// if it can.
func (q *sendq) postSmall(w *provider.WR, rem *remote) bool {
	if rem == nil || !q.inboxFits(q.head, rem) {
		return false
	}
	var buf [inbox.MaxData]byte
	data, ok := q.dataOf(w, &buf)
	return ok && q.postInbox(w, q.head, rem, data)
}

// full is ErrAgain when every slot of the queue is taken.
func (q *sendq) full() error {
	if q.head-q.loadCredited() >= uint64(q.depth) {
		return q.errFull()
	}
	return nil
}

// errFull is full's error, apart so that full inlines. A loop that posts
// faster than it polls meets it all the time: it is made once per queue,
// and returned as it is (see fullErr).
func (q *sendq) errFull() error {
	if q.fullErr == nil {
		q.fullErr = provider.Errorf(provider.ErrAgain, "%s is full (depth %d): poll completions", q.name(), q.depth)
	}
	return q.fullErr
}

// wait keeps the request of sequence q.head until it can run: behind
// the queue's pending requests, or, when it ran (ran) and found no
// receive at its target, for the RNR retries, unless it has none.
func (q *sendq) wait(w *provider.WR, rem *remote, ran bool) {
	if ran && q.rnrRetry == 0 {
		q.fail(w, q.head, rem, provider.CRRNRRetryCntExcErr)
		return
	}
	if !q.enqueue(w, q.head, rem) {
		q.fail(w, q.head, rem, provider.CRLocAccessErr)
	}
}

// enqueue keeps a request that must wait for a receive. An inline
// request's data is copied now, from Inline or from its SGEs: the caller may
// reuse them once Post returns. False means its SGEs could not be read any
// more (a segment closed since the post began): nothing was queued.
func (q *sendq) enqueue(w *provider.WR, seq uint64, rem *remote) bool {
	p := q.takeFree()
	p.wr, p.seq, p.rem = *w, seq, rem
	p.wr.Local = p.sge[:copy(p.sge[:], w.Local)]
	if w.Flags&provider.FlagInline != 0 {
		p.buf = append(p.buf[:0], w.Inline...)
		if !w.InlineBytes() {
			l := &q.sg[0]
			if !q.local(w, l) {
				q.recycle(p)
				return false
			}
			for i := 0; i < l.Len(); i++ {
				p.buf = append(p.buf, l.At(i).B...)
			}
			l.Release()
		}
		p.wr.Inline, p.wr.Local = p.buf, nil
	}
	q.pending = append(q.pending, p)
	if len(q.pending) == 1 && q.state == provider.StateReady {
		q.retries = 0
		q.arm()
		q.waitOn(rem)
	}
	return true
}

// takeFree takes a pendingWR off the free list, growing it if empty.
func (q *sendq) takeFree() *pendingWR {
	if len(q.free) == 0 {
		q.grow()
	}
	n := len(q.free)
	p := q.free[n-1]
	q.free = q.free[:n-1]
	return p
}

// popPending removes the oldest pending request. The slice is shifted
// down rather than resliced, so that its array is reused.
func (q *sendq) popPending() *pendingWR {
	p := q.pending[0]
	n := copy(q.pending, q.pending[1:])
	q.pending[n] = nil
	q.pending = q.pending[:n]
	return p
}

// pendingBlock is how many pendingWRs one allocation makes: a sender that
// falls behind its receiver allocates depth/pendingBlock times at most.
const pendingBlock = 32

// grow adds a block of pendingWRs to the free list; the lists get room
// for the whole depth the first time, so they never grow again.
func (q *sendq) grow() {
	if cap(q.free) < q.depth {
		q.free = make([]*pendingWR, 0, q.depth+pendingBlock)
		q.pending = append(make([]*pendingWR, 0, q.depth), q.pending...)
	}
	// Each pendingWR gets its inline buffer from one slab per block, as a
	// WQE has its inline space: copying an inline request in never
	// allocates, not even the first time a slot is used.
	block := make([]pendingWR, pendingBlock)
	slab := make([]byte, pendingBlock*q.maxInline)
	for i := range block {
		block[i].buf = slab[i*q.maxInline : i*q.maxInline : (i+1)*q.maxInline]
		q.free = append(q.free, &block[i])
	}
}

// recycle keeps a finished pendingWR for the next enqueue.
func (q *sendq) recycle(p *pendingWR) {
	buf := p.buf[:0]
	*p = pendingWR{buf: buf}
	q.free = append(q.free, p)
}

func (q *sendq) arm() {
	if q.timer == nil {
		q.timer = time.AfterFunc(q.rnrTimeout, q.tick)
		return
	}
	q.timer.Reset(q.rnrTimeout)
}

// tick is one RNR retry.
func (q *sendq) tick() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed.Load() || q.state != provider.StateReady || len(q.pending) == 0 {
		return
	}
	q.retries++
	q.stats.rnrRetries++
	q.progress(retryTimer)
}

// kick retries at once, because the awaited receive was posted.
func (q *sendq) kick() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed.Load() || q.state != provider.StateReady || len(q.pending) == 0 {
		return
	}
	q.progress(retryKick)
}

// waitOn lists the queue with its JFC's stalled queues when the receive it
// waits for is in another process; one in this process kicks it.
func (q *sendq) waitOn(rem *remote) {
	if rem != nil && rem.rq.local == nil {
		q.jfc.stalled.add(q)
	}
}

// What made progress retry the waiting requests.
const (
	retryTimer = iota // the RNR timer: the retry counts
	retryKick         // a receive was posted in this process
	retryPoll         // the JFC's owner polled it empty (see stalledQueues)
)

// progress runs pending requests in order until one must wait again.
func (q *sendq) progress(cause int) {
	for len(q.pending) > 0 && q.state == provider.StateReady {
		p := q.pending[0]
		if q.exec(&p.wr, p.seq, p.rem) {
			if cause == retryTimer && q.rnrRetry != 7 && q.retries >= q.rnrRetry {
				q.popPending()
				q.fail(&p.wr, p.seq, p.rem, provider.CRRNRRetryCntExcErr)
				q.recycle(p)
				return
			}
			if cause != retryPoll {
				q.arm()
				q.waitOn(p.rem)
			}
			return
		}
		q.recycle(q.popPending())
		q.retries = 0
	}
}

// complete pushes the record of a finished request: always for a failure,
// for a success only when signaled.
func (q *sendq) complete(w *provider.WR, seq uint64, rem *remote, st provider.CRStatus, n uint32) {
	q.completeOf(w.UserCtx, w.Flags, w.Opcode, seq, rem, st, n)
}

// completeOf is complete for a request known by its context, flags and
// opcode.
func (q *sendq) completeOf(userCtx uint64, wf provider.WRFlags, op provider.Opcode, seq uint64, rem *remote, st provider.CRStatus, n uint32) {
	if st == provider.CRSuccess && wf&provider.FlagSignaled == 0 {
		return
	}
	// The slot's words are written in place, one store each, rather than
	// built in a provider.CR or on the stack and copied: fields written
	// just before would be read back in wider loads that cannot be
	// forwarded and wait for every store before them, and this runs
	// right after the request's data went to a peer's lines.
	v := &q.jfc.view
	pos, ok := v.ring.ReserveRecord()
	if !ok {
		v.overflow()
		return
	}
	var flags provider.CRFlags
	if q.jetty != nil {
		flags = provider.CRFlagJetty
	}
	s := (*crSlot)(v.ring.Payload(pos))
	s.userCtx, s.word, s.lenLocal = userCtx, seq, uint64(n)|uint64(q.id)<<32
	s.kind = uint64(st) | uint64(op)<<8 | uint64(flags)<<16
	if rem != nil {
		id := &rem.desc.ID
		s.remoteEID[0] = binary.NativeEndian.Uint64(id.EID[:8])
		s.remoteEID[1] = binary.NativeEndian.Uint64(id.EID[8:])
		s.ids = uint64(id.UASID) | uint64(id.ID)<<32
	} else {
		s.remoteEID[0], s.remoteEID[1], s.ids = 0, 0, 0
	}
	v.ring.Publish(pos)
	v.notify(st != provider.CRSuccess)
}

// fail completes a request with an error status and moves the queue to
// ERROR, raising the async event as hardware does.
func (q *sendq) fail(w *provider.WR, seq uint64, rem *remote, st provider.CRStatus) {
	q.complete(w, seq, rem, st, 0)
	if q.errorSuspend {
		q.suspend(seq)
		return
	}
	q.state = provider.StateError
	ev := provider.EventJFSErr
	if q.jetty != nil {
		ev = provider.EventJettyErr
	}
	q.ctx.events.Raise(ev, &q.src, 0)
}

func (q *sendq) Flush(crs []provider.CR) (int, error) {
	if q.closed.Load() {
		return 0, errClosed(q.name())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != provider.StateError && q.state != provider.StateSuspended {
		return 0, provider.Errorf(provider.ErrBadState, "flush needs the %s in ERROR or SUSPENDED, it is %v", q.name(), q.state)
	}
	q.quietInbox()
	n := 0
	for n < len(crs) && len(q.pending) > 0 {
		p := q.pending[0]
		q.pending = q.pending[1:]
		crs[n] = q.flushRecord(p)
		q.credit(p.seq)
		n++
	}
	q.stats.flushed += uint64(n)
	return n, nil
}

// flushRecord is the WR_FLUSH_ERR record of a pending request.
func (q *sendq) flushRecord(p *pendingWR) provider.CR {
	cr := provider.CR{Status: provider.CRWRFlushErr, WROpcode: p.wr.Opcode, UserCtx: p.wr.UserCtx, LocalID: q.id}
	if q.jetty != nil {
		cr.Flags = provider.CRFlagJetty
	}
	if p.rem != nil {
		cr.RemoteID = p.rem.desc.ID
	}
	return cr
}

func (q *sendq) Advise(ctx context.Context, r provider.Remote) error {
	if q.closed.Load() {
		return errClosed(q.name())
	}
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	rem, err := q.ctx.ownRemote(r)
	if err != nil {
		return err
	}
	if q.mode == provider.RC {
		return rules.AdviseRC()
	}
	if rem.desc.Mode != q.mode {
		return rules.ModeMismatch(rem.desc.Mode, q.mode)
	}
	// Loopback reaches every remote directly; there is no path to prepare.
	return nil
}

func (q *sendq) Unadvise(r provider.Remote) error {
	if q.closed.Load() {
		return errClosed(q.name())
	}
	_, err := q.ctx.ownRemote(r)
	return err
}

func (q *sendq) Query() (provider.QueueAttr, error) {
	if q.closed.Load() {
		return provider.QueueAttr{}, errClosed(q.name())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return provider.QueueAttr{ID: q.ctx.jettyID(q.id), State: q.state, Mode: q.mode, Depth: q.depth,
		Outstanding: int(q.head - q.loadCredited())}, nil
}

func (q *sendq) Modify(s provider.State) error {
	if q.closed.Load() {
		return errClosed(q.name())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch s {
	case provider.StateError:
		q.state = provider.StateError
		q.quietInbox()
	case provider.StateReset:
		q.state = provider.StateError // what quietInbox takes back stays pending
		q.quietInbox()
		for _, p := range q.pending {
			q.credit(p.seq)
		}
		q.pending = nil
		q.state = provider.StateReset
	case provider.StateReady:
		if q.state == provider.StateSuspended {
			q.resume()
			return nil
		}
		if q.state != provider.StateReset && q.state != provider.StateReady {
			return provider.Errorf(provider.ErrBadState, "%s must go through RESET to READY, it is %v", q.name(), q.state)
		}
		q.state = provider.StateReady
	default:
		return provider.Errorf(provider.ErrNotSupported, "%s state %v", q.name(), s)
	}
	return nil
}

func (q *sendq) closeQ() error {
	if q.closed.Load() {
		return errClosed(q.name())
	}
	return q.src.Busy()
}

func (q *sendq) destroy() {
	if q.closed.Swap(true) {
		return
	}
	q.mu.Lock()
	if q.timer != nil {
		q.timer.Stop()
	}
	if q.ib.timer != nil {
		q.ib.timer.Stop()
	}
	// Requests in an inbox complete if delivered, and are flushed below
	// if not; the route goes back.
	q.state = provider.StateError
	q.quietInbox()
	q.dropRoute()
	// The requests still waiting (RNR) will never run: each completes
	// as flushed, so that the caller hears of every request once (and a
	// view it used is released when the record is polled). A closed JFC
	// has nobody to tell, and its ring is gone.
	if !q.jfc.closed.Load() {
		for _, p := range q.pending {
			cr := q.flushRecord(p)
			q.jfc.view.push(&cr, p.seq)
		}
	}
	q.pending = nil
	q.memo.forget()
	st := q.statsLocked()
	q.mu.Unlock()
	q.ctx.retire(st)
	q.jfc.stalled.remove(q)
	q.ctx.unregisterSendq(q)
	q.ctx.events.Forget(&q.src)
	q.jfc.users.Add(-1)
}

type jfsObj struct{ *sendq }

func (j *jfsObj) rank() int { return objtab.RankSend }

func (c *lbContext) NewJFS(cfg provider.JFSConfig) (provider.JFS, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if cfg.Mode == provider.RC {
		return nil, provider.Errorf(provider.ErrInvalid, "RC mode needs a Jetty, not a JFS")
	}
	q, err := c.newSendq(cfg)
	if err != nil {
		return nil, err
	}
	j := &jfsObj{q}
	if q.src.Owner == nil {
		q.src.Owner = j
	}
	if q.id, err = c.adopt(j); err != nil {
		q.jfc.users.Add(-1)
		return nil, err
	}
	c.registerSendq(q)
	return j, nil
}

func (j *jfsObj) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if err := j.closeQ(); err != nil {
		return err
	}
	j.ctx.disown(j)
	j.destroy()
	return nil
}

// remoteLost moves an RC jetty whose bound remote lived in the lost peer's
// process to ERROR and raises JETTY_ERR.
func (q *sendq) remoteLost(p *peerConn) {
	if q.jetty == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.jetty.bound
	if q.closed.Load() || b == nil || b.rq.peer != p || q.state != provider.StateReady {
		return
	}
	q.state = provider.StateError
	q.ctx.events.Raise(provider.EventJettyErr, &q.src, 0)
}
