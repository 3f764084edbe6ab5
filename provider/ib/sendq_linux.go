//go:build cgo && urma_verbs

package ib

import (
	"context"
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/qcheck"
	"github.com/urma-go/sdk/provider/internal/rules"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
)

// Slot states of a send queue.
const (
	slotFree uint8 = iota
	slotPosted
	slotDone
)

// sendSlot remembers a posted request until its record is polled: what
// the record reports, and the connection whose QP holds it (nil for a
// request the provider completes itself).
type sendSlot struct {
	seq      uint64
	userCtx  uint64
	remote   provider.JettyID
	cn       *conn
	length   uint32
	opcode   provider.Opcode
	signaled bool
	state    uint8
	// held is a record that completed ahead of an earlier signaled
	// request on another connection; it waits in cr for its turn.
	held bool
	cr   provider.CR
	// queued marks a slot whose record is in the JFC's backlog: Flush
	// and Close must not report the request again.
	queued bool

	// extra counts the send queue entries the request takes beyond its
	// one: a WRITE_NOTIFY's notify WRITE (see buildNotify).
	extra uint8
}

// sendq is a JFS, or the send side of a Jetty. In RM mode it owns one RC
// connection per remote it sends to; in RC mode it uses its Jetty's one.
// Requests are numbered by seq; a wr_id is (completer id, low 32 bits of
// seq), and the slot ring is a power of two so the low bits find the slot.
type sendq struct {
	// fullErr is the error of a post to the queue while it is full: made
	// once, as a loop that posts faster than it polls meets it all the
	// time.
	fullErr   error
	ctx       *ibContext
	id        uint32
	cid       uint32
	jfc       *jfc
	jetty     *jetty
	mode      provider.TransportMode
	depth     int
	maxSGE    int
	maxInline int
	rnrRetry  uint8
	rnrTimer  uint8
	limits    wrcheck.Limits
	src       asyncq.Source
	closed    atomic.Bool

	mu    sync.Mutex
	state provider.State
	slots []sendSlot
	mask  uint64
	head  uint64 // seq of the next request
	tail  uint64 // oldest request whose slot is held
	conns map[*remote]*conn
	// ud is a UM queue's UD QP, and dests the addresses of its remotes
	// (see datagram_linux.go).
	ud     *conn
	dests  map[*remote]*udDest
	lastHW *conn // connection of the newest request to a QP
	// queued counts this queue's records waiting in the JFC's backlog:
	// while there are any, later records queue behind them.
	queued int
	wrs    []verbs.SendWR
	wrIdx  []int // index in the caller's batch of each of wrs
	sges   []verbs.SGE
	lkeys  []uint32 // of the request being posted, found by validate
	lsegs  []*segment
	// segs holds the local segments of the request in each slot (indexed
	// as slots): a request the device flushes because one of them was
	// unregistered under it failed locally, not on a torn-down
	// connection (see complete).
	segs [][]*segment
	// held counts held records; pendingSignaled the signaled requests
	// running on QPs (each conn counts its own). They let a completion
	// skip the order checks when no other QP can be ahead of it.
	held            int
	pendingSignaled int
	// fuse is on while pollPost runs a poll and a post in one call:
	// flushBatch hands its batch to it instead of to the QP.
	fuse pollFuse

	// WRITE_NOTIFY (notify_linux.go): extra counts the send queue
	// entries held beyond one per slot; ntg is the notify target
	// validate found; notify holds each slot's notify data, registered
	// at the first WRITE_NOTIFY.
	extra  uint64
	ntg    *target
	notify notifyArea

	// errTimeout is JFSConfig.ErrTimeout: 0 for rdma_cm's ACK timeout,
	// else the timeout code plus one (setAckTimeout).
	errTimeout uint8
	// stats are the queue's counters, under mu (see stats_linux.go).
	stats sendStats
}

func (c *ibContext) NewJFS(cfg provider.JFSConfig) (provider.JFS, error) {
	if cfg.Mode == provider.RC {
		return nil, provider.Errorf(provider.ErrInvalid, "RC mode is for jetties, a JFS cannot be bound")
	}
	q, err := c.newSendq(cfg, nil)
	if err != nil {
		return nil, err
	}
	q.id = c.newID(q)
	c.track(q)
	return q, nil
}

func (c *ibContext) newSendq(cfg provider.JFSConfig, owner *jetty) (*sendq, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	a := &c.dev.attr
	if err := qcheck.Send(&cfg, a, c.dev.info.Name); err != nil {
		return nil, err
	}
	jc, err := c.ownJFC(cfg.JFC)
	if err != nil {
		return nil, err
	}
	// Room for depth+1 requests: a fused post may take the slot of one
	// whose completion it has, before that one's record is made (fuseTail).
	ring := 1 << bits.Len(uint(cfg.Depth))
	q := &sendq{ctx: c, jfc: jc, jetty: owner, mode: cfg.Mode, depth: cfg.Depth, maxSGE: cfg.MaxSGE,
		maxInline: cfg.MaxInline, rnrRetry: uint8(cfg.RNRRetry), rnrTimer: rnrTimerCode(cfg.RNRTimeout),
		state: provider.StateReady, slots: make([]sendSlot, ring), mask: uint64(ring - 1),
		conns: map[*remote]*conn{}, dests: map[*remote]*udDest{}, wrs: make([]verbs.SendWR, 0, 16), wrIdx: make([]int, 0, 16), lkeys: make([]uint32, 0, cfg.MaxSGE), lsegs: make([]*segment, 0, cfg.MaxSGE), sges: make([]verbs.SGE, 0, 16*cfg.MaxSGE),
		segs: make([][]*segment, ring)}
	q.fullErr = provider.Errorf(provider.ErrAgain, "queue holds %d requests", q.depth)
	q.errTimeout = cfg.ErrTimeout
	backing := make([]*segment, ring*cfg.MaxSGE)
	for i := range q.segs {
		q.segs[i] = backing[i*cfg.MaxSGE : i*cfg.MaxSGE : (i+1)*cfg.MaxSGE]
	}
	q.limits = wrcheck.Limits{Device: c.dev.info.Name, Mode: cfg.Mode, MaxSGE: cfg.MaxSGE, MaxInline: cfg.MaxInline,
		MaxReadSGE: a.MaxReadSGE, MaxMsgSize: a.MaxMsgSize, AtomicOps: a.AtomicOps, ImmData: a.ImmData, Imm32: true}
	if cfg.Mode == provider.UM {
		q.limits.MaxMsgSize = a.MaxUMMsgSize // a datagram is one packet
	}
	q.limits.WriteNotify = a.WriteNotify
	q.src.Owner = cfg.Owner
	if q.src.Owner == nil {
		q.src.Owner = q
	}
	jc.users.Add(1)
	q.cid = c.addCompleter(q)
	return q, nil
}

// rnrTimes are the pauses of the InfiniBand RNR NAK timer codes 1..31;
// code 0 is 655.36 ms.
var rnrTimes = [...]time.Duration{0, 10 * time.Microsecond, 20 * time.Microsecond, 30 * time.Microsecond,
	40 * time.Microsecond, 60 * time.Microsecond, 80 * time.Microsecond, 120 * time.Microsecond,
	160 * time.Microsecond, 240 * time.Microsecond, 320 * time.Microsecond, 480 * time.Microsecond,
	640 * time.Microsecond, 960 * time.Microsecond, 1280 * time.Microsecond, 1920 * time.Microsecond,
	2560 * time.Microsecond, 3840 * time.Microsecond, 5120 * time.Microsecond, 7680 * time.Microsecond,
	10240 * time.Microsecond, 15360 * time.Microsecond, 20480 * time.Microsecond, 30720 * time.Microsecond,
	40960 * time.Microsecond, 61440 * time.Microsecond, 81920 * time.Microsecond, 122880 * time.Microsecond,
	163840 * time.Microsecond, 245760 * time.Microsecond, 327680 * time.Microsecond, 491520 * time.Microsecond}

// rnrTimerCode is the smallest code whose pause is at least d, so a
// configured pause is never shortened.
func rnrTimerCode(d time.Duration) uint8 {
	for code := 1; code < len(rnrTimes); code++ {
		if rnrTimes[code] >= d {
			return uint8(code)
		}
	}
	return 0
}

func (q *sendq) rank() int {
	if q.jetty != nil {
		return 0
	}
	return 1
}

func (q *sendq) queueID() provider.JettyID {
	return provider.JettyID{EID: q.ctx.eid.eid, UASID: q.ctx.uasid, ID: q.id}
}

var wrOpcodes = map[provider.Opcode]uint8{
	provider.OpWrite: verbs.WRWrite, provider.OpWriteImm: verbs.WRWriteImm, provider.OpRead: verbs.WRRead,
	provider.OpSend: verbs.WRSend, provider.OpSendImm: verbs.WRSendImm, provider.OpCAS: verbs.WRCAS,
	provider.OpFAdd: verbs.WRFAdd, provider.OpNOP: verbs.WRWrite,
}

func (q *sendq) Post(wrs []provider.WR) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.jetty != nil {
		// Runs before the unlock: connections the rdma_cm goroutine
		// replaced during this post go now (see jetty.retireConn).
		defer q.jetty.dropRetired()
	}
	n, err := q.postLocked(wrs)
	q.countPost(wrs[:n], err)
	return n, err
}

// postLocked is Post with q.mu held.
func (q *sendq) postLocked(wrs []provider.WR) (int, error) {
	switch {
	case q.closed.Load() || q.ctx.closed.Load():
		return 0, errClosed("jfs")
	case q.state != provider.StateReady:
		return 0, provider.Errorf(provider.ErrBadState, "queue is %v", q.state)
	}
	q.wrs, q.wrIdx, q.sges = q.wrs[:0], q.wrIdx[:0], q.sges[:0]
	var batch *conn
	for i := range wrs {
		w := &wrs[i]
		rem, tg, err := q.validate(w)
		if err != nil {
			return q.flushBatch(batch, i, err)
		}
		if q.head-q.tail+q.extra >= uint64(q.depth) && (q.extra != 0 || !q.fuseTail()) {
			return q.flushBatch(batch, i, q.fullErr)
		}
		if w.Opcode == provider.OpWriteNotify && !q.notifyRoom() {
			return q.flushBatch(batch, i, q.fullErr)
		}
		if q.state != provider.StateReady {
			// An earlier request of the batch failed before the device
			// saw it (softFail): the queue stops there, and the rest wait
			// for Flush, as requests behind a failure on the device do.
			q.holdBack(w, rem)
			continue
		}
		if !q.localInRange(w) {
			// Caught here rather than by the device, which reports it
			// differently from one driver to the next.
			if q.fuse.on {
				return i, errNotPosted // only the device's posts are fused
			}
			if n, ferr := q.flushBatch(batch, i, nil); ferr != nil {
				return n, ferr
			}
			batch = nil
			q.softFail(w, rem, provider.CRLocAccessErr)
			continue
		}
		var cn *conn
		var dst *udDest
		if rem != nil {
			if q.mode == provider.UM {
				cn, dst, err = q.udTarget(context.Background(), rem)
			} else {
				cn, err = q.connFor(context.Background(), rem)
			}
			if err != nil {
				if !errors.Is(err, provider.ErrNotFound) && !errors.Is(err, provider.ErrClosed) {
					return q.flushBatch(batch, i, err)
				}
				// The target is gone: the request completes with the
				// error a vanished responder gives.
				if q.fuse.on {
					return i, errNotPosted
				}
				if n, ferr := q.flushBatch(batch, i, nil); ferr != nil {
					return n, ferr
				}
				batch = nil
				q.softFail(w, rem, provider.CRRemAccessAbortErr)
				continue
			}
		} else if q.mode != provider.UM && q.lastHW != nil && !q.lastHW.dead.Load() && q.pendingHW() {
			cn = q.lastHW // a NOP waits for the requests before it on their QP
		}
		if cn == nil && q.fuse.on {
			return i, errNotPosted
		}
		if cn != batch && len(q.wrs) > 0 {
			if n, ferr := q.flushBatch(batch, i, nil); ferr != nil {
				return n, ferr
			}
		}
		batch = cn
		seq := q.head
		q.head++
		s := &q.slots[seq&q.mask]
		*s = sendSlot{seq: seq, userCtx: w.UserCtx, cn: cn, length: uint32(w.DataLen()), opcode: w.Opcode,
			signaled: w.Flags&provider.FlagSignaled != 0, state: slotPosted}
		if rem != nil {
			s.remote = rem.desc.ID
		}
		if w.Opcode.IsAtomic() {
			s.length = 8
		}
		if w.Opcode == provider.OpNOP {
			s.length = 0
		}
		if w.Opcode == provider.OpWriteNotify {
			s.extra = 1
			q.extra++
		}
		if cn == nil {
			switch {
			case !s.signaled:
			case q.pendingSignaled > 0:
				// A UM NOP cannot go on the UD QP (it takes only
				// SENDs): its record waits for the running ones.
				s.held, s.cr = true, q.record(s, provider.CRSuccess)
				q.held++
			default:
				q.queue(s, q.record(s, provider.CRSuccess))
			}
			continue
		}
		q.segs[seq&q.mask] = append(q.segs[seq&q.mask][:0], q.lsegs...)
		q.build(w, tg, dst, seq, i)
		q.lastHW = cn
		if s.signaled {
			q.pendingSignaled++
			cn.pending++
		}
	}
	return q.flushBatch(batch, len(wrs), nil)
}

// flushBatch posts the requests built for cn. On a device refusal the
// unposted ones give their slots back. It returns (n, cause) for Post:
// n is the index of the first request not queued.
func (q *sendq) flushBatch(cn *conn, n int, cause error) (int, error) {
	if len(q.wrs) == 0 {
		return n, cause
	}
	var posted int
	var err error
	if q.fuse.on {
		posted, err = q.fuse.post(cn, q.wrs, q.sges)
	} else {
		posted, err = cn.qp.PostSend(q.wrs, q.sges)
	}
	runtime.KeepAlive(cn)
	if err != nil {
		// Give back the slots from the first request the device refused.
		first := q.wrIdx[posted]
		seq32 := uint32(q.wrs[posted].ID())
		for q.head > q.tail {
			q.head--
			q.retire(&q.slots[q.head&q.mask], slotFree)
			if uint32(q.head) == seq32 {
				break
			}
		}
		q.wrs, q.wrIdx, q.sges = q.wrs[:0], q.wrIdx[:0], q.sges[:0]
		if err == errNotPosted {
			return first, err
		}
		return first, verbsErr("post send", err)
	}
	q.wrs, q.wrIdx, q.sges = q.wrs[:0], q.wrIdx[:0], q.sges[:0]
	return n, cause
}

// build appends the verbs form of w, the request at index idx of the
// caller's batch.
func (q *sendq) build(w *provider.WR, tg *target, dst *udDest, seq uint64, idx int) {
	if w.Opcode == provider.OpWriteNotify {
		q.buildNotify(w, tg, seq, idx)
		return
	}
	off := len(q.sges)
	flags := uint8(0)
	if w.Flags&provider.FlagSignaled != 0 {
		flags |= verbs.SendSignaled
	}
	if w.Flags&provider.FlagFence != 0 {
		flags |= verbs.SendFence
	}
	if w.Flags&provider.FlagSolicited != 0 {
		flags |= verbs.SendSolicited
	}
	switch {
	case w.Opcode == provider.OpNOP:
	case w.InlineBytes():
		flags |= verbs.SendInline
		{
			var sge verbs.SGE
			// The device copies inline data during the post call, while
			// w is still referenced by the caller's slice.
			sge.Set(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(w.Inline)))), uint32(len(w.Inline)), 0)
			q.sges = append(q.sges, sge)
		}
	default:
		if w.Flags&provider.FlagInline != 0 {
			flags |= verbs.SendInline // the device copies from the SGEs during the post
		}
		for k := range w.Local {
			var sge verbs.SGE
			sge.Set(w.Local[k].Addr, w.Local[k].Len, q.lkeys[k])
			q.sges = append(q.sges, sge)
		}
	}
	id := uint64(q.cid)<<32 | uint64(uint32(seq))
	opcode := wrOpcodes[w.Opcode]
	confirm := q.ctx.dev.iwarp && flags&verbs.SendSignaled != 0 &&
		(w.Opcode == provider.OpWrite || w.Opcode == provider.OpSend)
	if q.ctx.dev.iwarp && w.Opcode == provider.OpNOP {
		opcode = verbs.WRRead // see confirm
		q.sges = append(q.sges, q.ctx.zeroSGE())
	}
	if confirm {
		flags &^= verbs.SendSignaled
	}
	var vw verbs.SendWR
	vw.Set(id, opcode, flags, off, len(q.sges)-off)
	if tg != nil {
		vw.SetRemote(w.Remote.Addr, tg.rkey)
	}
	if dst != nil {
		vw.SetUD(dst.ah, dst.qpn, dst.qkey)
	}
	switch w.Opcode {
	case provider.OpCAS:
		vw.SetAtomic(w.Compare, w.Operand)
	case provider.OpFAdd:
		vw.SetAtomic(w.Operand, 0)
	case provider.OpWriteImm, provider.OpSendImm:
		vw.SetImm(uint32(w.Imm))
	}
	q.wrs = append(q.wrs, vw)
	q.wrIdx = append(q.wrIdx, idx)
	if confirm {
		// iWARP completes a WRITE or SEND once it is handed to TCP, and
		// reports a responder's refusal only by tearing the connection
		// down. A zero-length READ behind it is answered after the
		// responder has placed it, so its completion, carrying the
		// request's id, means what a completion means on InfiniBand.
		var rd verbs.SendWR
		q.sges = append(q.sges, q.ctx.zeroSGE())
		rd.Set(id, verbs.WRRead, verbs.SendSignaled, len(q.sges)-1, 1)
		q.wrs = append(q.wrs, rd)
		q.wrIdx = append(q.wrIdx, idx)
	}
}

// zeroSGE is the one SGE of a zero-length READ, and of a receive posted
// without buffers: length 0 in the guard page. A READ posted with no SGE
// at all leaves libsiw's ring slot with the SGE of whatever request used
// it before, and siw then reads that many bytes; with an explicit empty
// one nothing is read or key-checked.
func (c *ibContext) zeroSGE() verbs.SGE {
	var z verbs.SGE
	z.Set(uint64(uintptr(unsafe.Pointer(&c.guardMem[0]))), 0, c.guard.LKey)
	return z
}

// sqSize is the QP send queue size: twice the depth on iWARP, where a
// signaled request may take two work requests (see build).
func (q *sendq) sqSize() int {
	if q.ctx.dev.iwarp {
		return 2 * q.depth
	}
	return q.depth
}

// retire moves a slot to state (done or free); a posted signaled request
// on a QP leaves the counts of running ones.
func (q *sendq) retire(sl *sendSlot, state uint8) {
	if sl.state == slotPosted && sl.signaled && sl.cn != nil {
		q.pendingSignaled--
		sl.cn.pending--
	}
	if sl.extra != 0 {
		q.extra -= uint64(sl.extra)
		sl.extra = 0
	}
	sl.state = state
}

// pendingHW reports whether a request on a QP may still be running.
func (q *sendq) pendingHW() bool {
	for s := q.tail; s < q.head; s++ {
		if sl := &q.slots[s&q.mask]; sl.state == slotPosted && sl.cn != nil {
			return true
		}
	}
	return false
}

func (q *sendq) record(s *sendSlot, st provider.CRStatus) provider.CR {
	cr := provider.CR{Status: st, WROpcode: s.opcode, Len: s.length, UserCtx: s.userCtx, LocalID: q.id, RemoteID: s.remote}
	if q.jetty != nil {
		cr.Flags |= provider.CRFlagJetty
	}
	if st != provider.CRSuccess {
		cr.Len = 0
	}
	return cr
}

// softFail queues w as failed with status st, found before a QP carried
// it: its target went away, or a local SGE leaves its segment.
func (q *sendq) softFail(w *provider.WR, rem *remote, st provider.CRStatus) {
	seq := q.head
	q.head++
	s := &q.slots[seq&q.mask]
	*s = sendSlot{seq: seq, userCtx: w.UserCtx, opcode: w.Opcode, signaled: true, state: slotPosted}
	if rem != nil {
		s.remote = rem.desc.ID
	}
	q.queue(s, q.record(s, st))
	q.failLocked(true)
}

// holdBack takes a slot for w without posting it, in a queue that failed
// during this post; Flush reports it.
func (q *sendq) holdBack(w *provider.WR, rem *remote) {
	seq := q.head
	q.head++
	s := &q.slots[seq&q.mask]
	*s = sendSlot{seq: seq, userCtx: w.UserCtx, opcode: w.Opcode, signaled: w.Flags&provider.FlagSignaled != 0, state: slotPosted}
	if rem != nil {
		s.remote = rem.desc.ID
	}
}

// queue puts a record of slot s in the JFC's backlog, where Poll finds it
// before newer completions.
func (q *sendq) queue(s *sendSlot, cr provider.CR) {
	if q.jfc.push(softRecord{cr: cr, q: q, seq: s.seq}) {
		q.queued++
		s.queued = true
	} else {
		q.doneThrough(s.seq, s.cn) // dropped by a full JFC
	}
}

// earlierRunning reports whether a signaled request before seq, on
// another connection, has not completed: RM requests to different targets
// run on different QPs, whose completions verbs does not order.
func (q *sendq) earlierRunning(seq uint64, cn *conn) bool {
	for x := q.tail; x < seq; x++ {
		sl := &q.slots[x&q.mask]
		if sl.state == slotPosted && sl.signaled && !sl.held && sl.cn != cn {
			return true
		}
	}
	return false
}

// release queues the held records that are now next in order.
func (q *sendq) release() {
	for x := q.tail; x < q.head && q.held > 0; x++ {
		sl := &q.slots[x&q.mask]
		if sl.state != slotPosted || sl.queued {
			continue // done, or its record is in the backlog already
		}
		if sl.held {
			sl.held = false
			q.held--
			q.queue(sl, sl.cr)
			continue
		}
		if sl.signaled && sl.cn != nil {
			return // still running: everything after it waits
		}
	}
}

// localInRange checks that every local SGE lies inside its segment.
func (q *sendq) localInRange(w *provider.WR) bool {
	if w.InlineBytes() {
		return true
	}
	for i := range w.Local {
		d := w.Local[i].Seg.Desc()
		a, n := w.Local[i].Addr, uint64(w.Local[i].Len)
		if a < d.VA || a+n < a || a+n > d.VA+d.Len {
			return false
		}
	}
	return true
}

// complete turns a send completion into its record; false drops it (a
// flush that Flush reports, or a completion of a slot already given back).
func (q *sendq) complete(wc *verbs.WC, cr *provider.CR) bool {
	seq32 := uint32(wc.ID())
	q.mu.Lock()
	defer q.mu.Unlock()
	s := &q.slots[uint64(seq32)&q.mask]
	if s.state != slotPosted || uint32(s.seq) != seq32 || s.queued {
		// Given back, or already reported: connGone gave it a record when
		// its QP was destroyed before this completion was polled.
		return false
	}
	st := crStatus(wc.Status())
	if st != provider.CRSuccess && q.state != provider.StateReady {
		// The queue is in ERROR already: the request was cut off by it
		// (flushed, or stopped mid-transfer), and Flush reports it.
		return false
	}
	if st == provider.CRWRFlushErr || !q.ctx.dev.attr.RemoteStatus && st == provider.CRLocOperationErr {
		// Flushed, or on iWARP stopped mid-transfer, while the queue
		// was usable: the responder tore the connection down, or (rxe
		// says no more) a local segment was unregistered under the
		// request.
		st = provider.CRRemAccessAbortErr
		if q.localGone(s.seq) {
			st = provider.CRLocAccessErr
		}
	}
	if st != provider.CRSuccess {
		provider.Logf(provider.LogInfo, "ib: %v on jfs %d: %s (vendor error %#x)", s.opcode, q.id,
			verbs.WCStatusName(wc.Status()), wc.VendorErr())
	}
	rec := q.record(s, st)
	others := q.pendingSignaled - s.cn.pending // signaled requests running on other QPs
	if st == provider.CRSuccess && (q.queued > 0 || others > 0 && q.earlierRunning(s.seq, s.cn)) {
		// Records leave in posting order: this one waits for the earlier
		// ones (a failure does not wait; the queue stops there).
		s.held, s.cr = true, rec
		q.held++
		q.release()
		return false
	}
	*cr = rec
	q.doneThrough(s.seq, s.cn)
	q.release()
	if st != provider.CRSuccess {
		q.failLocked(true)
	}
	return true
}

// localGone reports whether a local segment of the request in seq's slot
// was unregistered since it was posted.
func (q *sendq) localGone(seq uint64) bool {
	for _, seg := range q.segs[seq&q.mask] {
		if seg.closed.Load() {
			return true
		}
	}
	return false
}

// softPolled frees the slot of a software record once it is polled.
func (q *sendq) softPolled(seq uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued--
	if s := &q.slots[seq&q.mask]; s.state == slotPosted && s.seq == seq {
		q.doneThrough(seq, s.cn)
	}
	q.release()
}

// doneThrough marks seq done, and with it the earlier unsignaled requests
// of the same QP (verbs completes a QP's requests in order) and the
// earlier unsignaled ones the provider completes itself; then it gives
// back the slots from the tail on.
func (q *sendq) doneThrough(seq uint64, cn *conn) {
	for s := q.tail; s <= seq && s < q.head; s++ {
		sl := &q.slots[s&q.mask]
		if sl.state == slotPosted && (s == seq || !sl.signaled && (sl.cn == cn || sl.cn == nil)) {
			q.retire(sl, slotDone)
		}
	}
	for q.tail < q.head && q.slots[q.tail&q.mask].state == slotDone {
		q.slots[q.tail&q.mask].state = slotFree
		q.tail++
	}
}

// failLocked puts the queue in ERROR: its QPs flush what they hold (those
// records are dropped; Flush reports the requests), and raise is the
// async event of a failed request.
func (q *sendq) failLocked(raise bool) {
	if q.state == provider.StateError {
		return
	}
	q.state = provider.StateError
	for x := q.tail; x < q.head && q.held > 0; x++ { // completed successes still count
		if sl := &q.slots[x&q.mask]; sl.state == slotPosted && sl.held {
			sl.held = false
			q.held--
			q.queue(sl, sl.cr)
		}
	}
	for _, cn := range q.allConns() {
		cn.toError()
	}
	if raise {
		ev := provider.EventJFSErr
		if q.jetty != nil {
			ev = provider.EventJettyErr
		}
		q.ctx.events.Raise(ev, &q.src, 0)
	}
}

// flushOnClose reports, in order, what a closing queue still holds:
// records that completed and wait for their turn as they are, and the
// requests the device may still be running as WR_FLUSH_ERR, as if the
// queue had gone to ERROR and been flushed. Each request is so reported
// once, and a view it used is released when its record is polled. The
// slots are retired: completions the device still delivers for them are
// dropped.
func (q *sendq) flushOnClose() {
	for x := q.tail; x < q.head; x++ {
		sl := &q.slots[x&q.mask]
		if sl.state != slotPosted || sl.queued {
			continue
		}
		cr := sl.cr
		if sl.held {
			sl.held = false
			q.held--
		} else {
			cr = q.record(sl, provider.CRWRFlushErr)
		}
		q.jfc.push(softRecord{cr: cr})
		q.retire(sl, slotDone)
	}
}

func (q *sendq) allConns() []*conn {
	out := make([]*conn, 0, len(q.conns)+1)
	for _, cn := range q.conns {
		out = append(out, cn)
	}
	if q.ud != nil {
		out = append(out, q.ud)
	}
	if q.jetty != nil {
		if cn := q.jetty.conn(); cn != nil {
			out = append(out, cn)
		}
	}
	return out
}

func (q *sendq) Flush(crs []provider.CR) (int, error) {
	if q.closed.Load() {
		return 0, errClosed("jfs")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != provider.StateError {
		return 0, provider.Errorf(provider.ErrBadState, "flush of a %v queue", q.state)
	}
	n := 0
	for s := q.tail; s < q.head && n < len(crs); s++ {
		sl := &q.slots[s&q.mask]
		if sl.state != slotPosted || sl.held || sl.queued {
			continue
		}
		crs[n] = q.record(sl, provider.CRWRFlushErr)
		q.retire(sl, slotDone)
		n++
	}
	for q.tail < q.head && q.slots[q.tail&q.mask].state == slotDone {
		q.slots[q.tail&q.mask].state = slotFree
		q.tail++
	}
	q.stats.flushed += uint64(n)
	return n, nil
}

func (q *sendq) Query() (provider.QueueAttr, error) {
	if q.closed.Load() {
		return provider.QueueAttr{}, errClosed("jfs")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	id := q.queueID()
	if q.jetty != nil {
		id.ID = q.jetty.id
	}
	return provider.QueueAttr{ID: id, State: q.state, Mode: q.mode, Depth: q.depth, Outstanding: int(q.head - q.tail)}, nil
}

func (q *sendq) Modify(s provider.State) error {
	if q.closed.Load() {
		return errClosed("jfs")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case s == provider.StateError:
		q.failLocked(false)
	case s == provider.StateReset && (q.state == provider.StateError || q.state == provider.StateReady):
		// A QP leaves ERROR only through RESET and a new connection:
		// drop them all; the next request reconnects.
		for seq := q.tail; seq < q.head; seq++ {
			q.retire(&q.slots[seq&q.mask], slotFree)
			q.slots[seq&q.mask].held = false
		}
		q.dropConns()
		q.tail, q.held = q.head, 0
		q.state = provider.StateReset
	case s == provider.StateReady && q.state == provider.StateReset:
		q.state = provider.StateReady
	default:
		return provider.Errorf(provider.ErrBadState, "queue %v -> %v", q.state, s)
	}
	return nil
}

func (q *sendq) dropConns() {
	for r, cn := range q.conns {
		q.ctx.cm.drop(cn)
		delete(q.conns, r)
	}
	if q.jetty != nil {
		q.jetty.dropConn()
	}
	q.dropUD()
	q.lastHW = nil
}

// connFor returns the live connection to r, connecting first if needed.
func (q *sendq) connFor(ctx context.Context, r *remote) (*conn, error) {
	if q.mode == provider.RC {
		return q.jetty.connect(ctx, r)
	}
	if cn := q.conns[r]; cn != nil {
		if !cn.dead.Load() {
			return cn, nil
		}
		q.ctx.cm.drop(cn)
		q.connGone(cn)
		delete(q.conns, r)
	}
	c := q.ctx
	req := request{op: opConnect, target: r.desc.ID.ID, token: r.token, kind: r.desc.Kind, mode: r.desc.Mode,
		policy: r.desc.TokenPolicy, srcEID: c.eid.eid, srcUASID: c.uasid, srcID: q.id, rnrTimer: q.rnrTimer, rnrRetry: q.rnrRetry}
	caps := verbs.QPCaps{MaxSendWR: q.sqSize(), MaxSendSGE: q.maxSGE, MaxInline: q.maxInline, MaxRecvWR: 1}
	d, err := c.dial(ctx, r.desc.ID.EID, r.desc.ID.UASID, req, func(id verbs.CMID) (*verbs.QP, error) {
		if err := q.setAckTimeout(id); err != nil {
			return nil, err
		}
		qp, err := id.CreateQP(c.vc, q.jfc.cq, c.ctl, nil, caps)
		if err != nil {
			return nil, verbsErr("create QP", err)
		}
		return qp, nil
	})
	if err != nil {
		return nil, err
	}
	if err := d.reply.err("connection to " + r.desc.String()); err != nil {
		return nil, err
	}
	cn := &conn{id: d.id, qp: d.qp}
	cn.down = func() { q.connDown(cn) }
	c.cm.register(cn)
	c.hub.watchQP(cn.qp.Num, func(verbs.AsyncEvent) {
		q.connDown(cn)
		c.cm.hangUp(cn)
	})
	q.conns[r] = cn
	return cn, nil
}

// connGone accounts for the requests still running on cn once its QP is
// destroyed, which leaves no completion to come for them: a connection the
// peer replaced by binding again, or a broken one dropped before its
// flushed requests were polled. As when the device flushes a broken
// connection (see complete), the first is reported as REM_ACCESS_ABORT_ERR
// and the queue goes to ERROR, where Flush reports the others. The caller
// holds q.mu.
func (q *sendq) connGone(cn *conn) {
	if cn == nil || q.state != provider.StateReady {
		return
	}
	for x := q.tail; x < q.head; x++ {
		sl := &q.slots[x&q.mask]
		if sl.state != slotPosted || sl.cn != cn || sl.held || sl.queued {
			continue
		}
		provider.Logf(provider.LogInfo, "ib: %v on jfs %d: its connection was dropped while it ran", sl.opcode, q.id)
		q.queue(sl, q.record(sl, provider.CRRemAccessAbortErr))
		q.failLocked(true)
		return
	}
}

// connDown moves a broken connection's QP to ERROR, so what it holds
// completes (with REM_ACCESS_ABORT_ERR for the first, see complete).
func (q *sendq) connDown(cn *conn) {
	cn.dead.Store(true)
	cn.toError()
}

func (q *sendq) Advise(ctx context.Context, p provider.Remote) error {
	if q.closed.Load() {
		return errClosed("jfs")
	}
	r, err := q.ctx.ownRemote(p)
	if err != nil {
		return err
	}
	if q.mode == provider.RC {
		return rules.AdviseRC()
	}
	if r.desc.Mode != q.mode {
		return provider.Errorf(provider.ErrInvalid, "target is %v, queue is %v", r.desc.Mode, q.mode)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mode == provider.UM {
		_, _, err = q.udTarget(ctx, r)
		return err
	}
	_, err = q.connFor(ctx, r)
	return err
}

// udTarget returns a UM queue's UD QP and the address of r.
func (q *sendq) udTarget(ctx context.Context, r *remote) (*conn, *udDest, error) {
	cn, err := q.udConn()
	if err != nil {
		return nil, nil, err
	}
	dst, err := q.dest(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	return cn, dst, nil
}

func (q *sendq) Unadvise(p provider.Remote) error {
	if q.closed.Load() {
		return errClosed("jfs")
	}
	r, err := q.ctx.ownRemote(p)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	cn, dst := q.conns[r], q.dests[r]
	if cn == nil && dst == nil {
		return provider.Errorf(provider.ErrNotFound, "not advised to %v", r.desc.ID)
	}
	if q.head != q.tail {
		return provider.Errorf(provider.ErrBusy, "requests are outstanding")
	}
	if dst != nil {
		_ = dst.ah.Destroy()
		delete(q.dests, r)
		return nil
	}
	q.ctx.cm.drop(cn)
	delete(q.conns, r)
	if q.lastHW == cn {
		q.lastHW = nil
	}
	return nil
}

func (q *sendq) Close() error {
	q.ctx.closeMu.RLock()
	defer q.ctx.closeMu.RUnlock()
	if q.closed.Load() {
		return errClosed("jfs")
	}
	if err := q.src.Busy(); err != nil {
		return err
	}
	return q.forceClose()
}

func (q *sendq) forceClose() error {
	if q.closed.Swap(true) {
		return nil
	}
	q.mu.Lock()
	q.flushOnClose()
	q.dropConns()
	q.notify.free() // after dropConns: no QP reads it any more
	q.mu.Unlock()
	c := q.ctx
	c.events.Forget(&q.src)
	c.dropCompleter(q.cid)
	if q.jetty == nil {
		c.dropID(q.id)
		c.untrack(q)
	}
	q.jfc.users.Add(-1)
	return nil
}

// validate applies the post-time checks of docs/semantics.md and returns
// the request's remote (nil for NOP) and imported target segment.
func (q *sendq) validate(w *provider.WR) (*remote, *target, error) {
	q.lsegs = q.lsegs[:0]
	if err := wrcheck.Opcode(w, &q.limits); err != nil {
		return nil, nil, err
	}
	if w.Opcode == provider.OpNOP {
		return nil, nil, nil
	}
	rem, err := q.target(w)
	if err != nil {
		return nil, nil, err
	}
	if err := wrcheck.Shape(w, &q.limits); err != nil {
		return nil, nil, err
	}
	q.lkeys = q.lkeys[:0]
	if !w.InlineBytes() {
		for i := range w.Local {
			seg, err := q.ctx.localSeg(w.Local[i].Seg)
			if err != nil {
				return nil, nil, err
			}
			q.lkeys = append(q.lkeys, seg.mr.LKey)
			q.lsegs = append(q.lsegs, seg)
		}
	}
	var tg *target
	if w.Opcode.IsOneSided() {
		t, ok := w.Remote.Seg.(*target)
		if !ok || t == nil || t.ctx != q.ctx {
			return nil, nil, provider.Errorf(provider.ErrInvalid, "%v needs a target segment imported into this context in Remote", w.Opcode)
		}
		if t.closed.Load() {
			return nil, nil, errClosed("target segment")
		}
		tg = t
	}
	if w.Opcode == provider.OpWriteNotify {
		if err := q.validateNotify(w); err != nil {
			return nil, nil, err
		}
	}
	return rem, tg, nil
}

// target resolves where a request goes, by transport mode.
func (q *sendq) target(w *provider.WR) (*remote, error) {
	t := w.Dest()
	if q.mode == provider.RC {
		b := q.jetty.boundRemote()
		if b == nil {
			return nil, rules.NotBound()
		}
		if t != nil {
			if r, _ := t.(*remote); r != b {
				return nil, rules.BoundElsewhere(b.desc.ID)
			}
		}
		if b.closed.Load() {
			return nil, errClosed("bound remote jetty")
		}
		return b, nil
	}
	if t == nil {
		return nil, rules.NoTarget(w.Opcode, q.mode)
	}
	r, err := q.ctx.ownRemote(t)
	if err != nil {
		// A jetty group: the request goes to the member its policy picks.
		m, perr := provider.PickMember(t, w.Hint)
		if perr != nil {
			return nil, perr
		}
		if m == t {
			return nil, err
		}
		if r, err = q.ctx.ownRemote(m); err != nil {
			return nil, err
		}
	}
	if r.desc.Mode != q.mode {
		return nil, rules.ModeMismatch(r.desc.Mode, q.mode)
	}
	return r, nil
}
