//go:build cgo && urma_verbs

package ib

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/qcheck"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
)

// jfr is a JFR: an SRQ. Every connection that delivers to it, from any
// peer, is a responder QP attached to the SRQ, so receives posted once
// serve them all.
type jfr struct {
	// fullErr is the error of a post of receives while the queue is
	// full, made once (see sendq.fullErr).
	fullErr error
	// accepting counts connections the CM goroutine is accepting onto the
	// SRQ (QP created, not yet attached), so that forceClose drops them
	// too before it destroys the SRQ, which refuses while a QP is on it.
	accepting sync.WaitGroup
	ctx       *ibContext
	id        uint32 // URMA id; a Jetty's own JFR has the Jetty's
	cid       uint32 // completer id, in the wr_ids of receives
	srq       *verbs.SRQ
	val       uint64
	jfc       *jfc
	depth     int
	maxSGE    int
	mode      provider.TransportMode
	policy    provider.TokenPolicy
	token     uint32
	kind      provider.JettyKind
	jetty     *jetty // owner when this is a Jetty's own JFR
	src       asyncq.Source
	users     atomic.Int32 // Jetties sharing it
	closed    atomic.Bool

	mu    sync.Mutex
	state provider.State
	slots []uint64 // user context per receive slot
	// seqs numbers the receive in each slot in posting order, for the
	// flush records of Close.
	seqs    []uint64
	nextSeq uint64
	free    []uint32
	wrs     []verbs.RecvWR
	sges    []verbs.SGE
	conns   map[*conn]struct{}

	pmu     sync.RWMutex
	peers   map[uint32]provider.JettyID // responder QP number -> sender
	udPeers map[udKey]provider.JettyID  // UM senders, see datagram_linux.go

	ud *udRecv // UM only

	// rxLimit is the receive threshold armed on the SRQ, 0 for none
	// (knobs_linux.go).
	rxLimit atomic.Int32
	// stats are the queue's counters, under mu (see stats_linux.go).
	stats provider.QueueStats
}

func (c *ibContext) NewJFR(cfg provider.JFRConfig) (provider.JFR, error) {
	j, err := c.newJFR(cfg, 0, nil)
	if err != nil {
		return nil, err
	}
	return j, nil
}

func (c *ibContext) newJFR(cfg provider.JFRConfig, id uint32, owner *jetty) (*jfr, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	a := &c.dev.attr
	if err := qcheck.Recv(&cfg, a, c.dev.info.Name); err != nil {
		return nil, err
	}
	if cfg.Mode == provider.UM && cfg.MaxSGE >= a.MaxJFRSGE {
		return nil, provider.Errorf(provider.ErrInvalid, "UM jfr max sge %d, device allows 1..%d (one SGE of each receive takes the datagram's routing header)", cfg.MaxSGE, a.MaxJFRSGE-1)
	}
	jc, err := c.ownJFC(cfg.JFC)
	if err != nil {
		return nil, err
	}
	j := &jfr{ctx: c, jfc: jc, depth: cfg.Depth, maxSGE: cfg.MaxSGE, mode: cfg.Mode, policy: cfg.TokenPolicy,
		token: cfg.Token, kind: provider.KindJFR, jetty: owner, val: nextObjValue(), state: provider.StateReady,
		slots: make([]uint64, cfg.Depth), seqs: make([]uint64, cfg.Depth), free: make([]uint32, cfg.Depth),
		wrs: make([]verbs.RecvWR, 0, 16), sges: make([]verbs.SGE, 0, 16*cfg.MaxSGE),
		conns: map[*conn]struct{}{}, peers: map[uint32]provider.JettyID{}, udPeers: map[udKey]provider.JettyID{}}
	j.fullErr = provider.Errorf(provider.ErrAgain, "jfr holds %d receives", j.depth)
	for i := range j.free {
		j.free[i] = uint32(cfg.Depth - 1 - i)
	}
	j.src.Owner = cfg.Owner
	if j.src.Owner == nil {
		j.src.Owner = j
	}
	srqSGE := cfg.MaxSGE
	if cfg.Mode == provider.UM {
		srqSGE++
	}
	if j.srq, err = c.vc.NewSRQ(cfg.Depth, srqSGE, uintptr(j.val)); err != nil {
		return nil, verbsErr("ibv_create_srq", err)
	}
	if cfg.RxThreshold > 0 {
		if err := j.srq.SetLimit(cfg.RxThreshold); err != nil {
			_ = j.srq.Destroy()
			return nil, verbsErr("set srq limit", err)
		}
		j.rxLimit.Store(int32(cfg.RxThreshold))
	}
	if cfg.Mode == provider.UM {
		if err := j.openUD(); err != nil {
			_ = j.srq.Destroy()
			return nil, err
		}
	}
	jc.users.Add(1)
	j.cid = c.addCompleter(j)
	if owner != nil {
		j.id, j.kind = id, provider.KindJetty
	} else {
		j.id = c.newID(j)
		c.track(j)
	}
	c.hub.watchObj(j.val, func(ev verbs.AsyncEvent) {
		if ev.Type == verbs.EventSRQLimit {
			j.limitReached()
		} else {
			c.events.Raise(provider.EventJFRErr, &j.src, 0)
		}
	})
	return j, nil
}

// ownJFC checks that a JFC of the config belongs to this context.
func (c *ibContext) ownJFC(p provider.JFC) (*jfc, error) {
	j, ok := p.(*jfc)
	if !ok || j == nil || j.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "jfc of another context or provider")
	}
	if j.closed.Load() {
		return nil, errClosed("jfc")
	}
	return j, nil
}

func (j *jfr) rank() int { return 1 }

func (j *jfr) Desc() provider.JettyDesc {
	return provider.JettyDesc{ID: provider.JettyID{EID: j.ctx.eid.eid, UASID: j.ctx.uasid, ID: j.id},
		Kind: j.kind, Mode: j.mode, TokenPolicy: j.policy}
}

func (j *jfr) PostRecv(wrs []provider.RecvWR) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed.Load() || j.ctx.closed.Load():
		return 0, errClosed("jfr")
	case j.state != provider.StateReady:
		j.stats.PostErrors++
		return 0, provider.Errorf(provider.ErrBadState, "jfr is %v", j.state)
	}
	j.wrs, j.sges = j.wrs[:0], j.sges[:0]
	var err error
	n := 0
	for i := range wrs {
		w := &wrs[i]
		if len(w.Local) > j.maxSGE {
			err = provider.Errorf(provider.ErrInvalid, "%d sges, jfr allows %d", len(w.Local), j.maxSGE)
			break
		}
		if len(j.free) == 0 {
			err = j.fullErr
			break
		}
		slot := j.free[len(j.free)-1]
		off := len(j.sges)
		if j.ud != nil {
			j.sges = append(j.sges, j.ud.grhSGE(slot))
		}
		for k := range w.Local {
			s, e := j.ctx.localSeg(w.Local[k].Seg)
			if e == nil && !wrcheck.Inside(&w.Local[k], s.desc.VA, s.desc.Len) {
				e = wrcheck.InSegment(&w.Local[k], s.desc.VA, s.desc.Len)
			}
			if e != nil {
				err = e
				break
			}
			var sge verbs.SGE
			sge.Set(w.Local[k].Addr, w.Local[k].Len, s.mr.LKey)
			j.sges = append(j.sges, sge)
		}
		if err != nil {
			j.sges = j.sges[:off]
			break
		}
		if len(j.sges) == off {
			// siw refuses a receive without SGEs (EINVAL); an empty one
			// takes the same messages, those of no bytes.
			j.sges = append(j.sges, j.ctx.zeroSGE())
		}
		j.free = j.free[:len(j.free)-1]
		j.slots[slot] = w.UserCtx
		j.seqs[slot] = j.nextSeq
		j.nextSeq++
		var rw verbs.RecvWR
		rw.Set(uint64(j.cid)<<32|uint64(slot), off, len(j.sges)-off)
		j.wrs = append(j.wrs, rw)
		n++
	}
	posted, perr := j.srq.PostRecv(j.wrs, j.sges)
	for k := posted; k < len(j.wrs); k++ { // give back the slots the device refused
		j.free = append(j.free, uint32(j.wrs[k].ID()))
	}
	j.stats.RecvPosted += uint64(posted)
	if perr != nil {
		j.stats.PostErrors++
		return posted, verbsErr("post receive", perr)
	}
	if err != nil {
		j.stats.PostErrors++
	}
	return n, err
}

// complete turns a receive completion into its record.
func (j *jfr) complete(wc *verbs.WC, cr *provider.CR) bool {
	slot := uint32(wc.ID())
	j.mu.Lock()
	if int(slot) >= len(j.slots) || j.closed.Load() || uint32(wc.ID()>>32) != j.cid {
		// Closed, or of an SRQ flushSRQ replaced: the receive was
		// reported as flushed.
		j.mu.Unlock()
		return false
	}
	userCtx := j.slots[slot]
	var from provider.JettyID
	length := wc.Len()
	if j.ud != nil {
		// The header must be read before the slot, and its buffer, is
		// posted again.
		from = j.udSender(wc, slot)
		length -= min(length, verbs.GRHSize)
	}
	j.free = append(j.free, slot)
	j.mu.Unlock()
	if j.ud == nil {
		j.pmu.RLock()
		from = j.peers[wc.QPNum()]
		j.pmu.RUnlock()
	}
	st := crStatus(wc.Status())
	if wc.Status() == verbs.WCLocQPOpErr {
		// A receive fails alone only when the message does not fit its
		// buffers; rxe reports that as a local QP operation error where
		// other devices say LOC_LEN_ERR.
		st = provider.CRLocLenErr
	}
	*cr = provider.CR{Status: st, Flags: provider.CRFlagRecv, Len: length,
		UserCtx: userCtx, LocalID: j.id, RemoteID: from, Opcode: provider.CROpSend}
	if j.kind == provider.KindJetty {
		cr.Flags |= provider.CRFlagJetty
	}
	switch {
	case wc.Opcode() == verbs.WCRecvImm:
		cr.Opcode, cr.Len = provider.CROpWriteImm, 0
	case wc.Flags()&verbs.WCWithImm != 0:
		cr.Opcode = provider.CROpSendImm
	}
	if wc.Flags()&verbs.WCWithImm != 0 {
		cr.Flags |= provider.CRFlagImm
		cr.Imm = uint64(wc.Imm())
	}
	if cr.Status != provider.CRSuccess {
		provider.Logf(provider.LogInfo, "ib: receive on jfr %d: %s (vendor error %#x)", j.id,
			verbs.WCStatusName(wc.Status()), wc.VendorErr())
		cr.Len = 0
	}
	return true
}

func (j *jfr) Query() (provider.QueueAttr, error) {
	if j.closed.Load() {
		return provider.QueueAttr{}, errClosed("jfr")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return provider.QueueAttr{ID: j.Desc().ID, State: j.state, Mode: j.mode, Depth: j.depth,
		Outstanding: j.depth - len(j.free)}, nil
}

func (j *jfr) Modify(s provider.State) error {
	if j.closed.Load() {
		return errClosed("jfr")
	}
	j.mu.Lock()
	switch {
	case s == provider.StateError:
	case s == provider.StateReset && j.state == provider.StateError:
	case s == provider.StateReady && j.state == provider.StateReset:
	default:
		j.mu.Unlock()
		return provider.Errorf(provider.ErrBadState, "jfr %v -> %v", j.state, s)
	}
	was := j.state
	j.state = s
	j.mu.Unlock()
	if s == provider.StateError && was != provider.StateError {
		// The SRQ would go on delivering to its posted receives: a JFR
		// that takes no requests ends its senders' connections, so
		// that their requests complete with REM_ACCESS_ABORT_ERR, and
		// beginAccept refuses new ones until it is READY again.
		j.dropConns()
		if was == provider.StateReady {
			return j.flushSRQ()
		}
	}
	return nil
}

// flushSRQ ends the receives posted, as a receive queue in error is
// flushed, so that none is left for a message after the JFR is READY
// again. Verbs cannot take receives back from an SRQ: the SRQ goes, each
// receive is reported WR_FLUSH_ERR (flushPosted), and a new SRQ takes the
// receives posted from now on. Completions of the old SRQ still in the CQ
// carry its completer id, which goes with it (complete drops them), so
// none is reported twice. No QP receives from the old SRQ any more:
// dropConns destroyed the responders', and a UM JFR's datagram QP is made
// anew with the SRQ (its senders import the JFR again to reach it).
func (j *jfr) flushSRQ() error {
	c := j.ctx
	j.mu.Lock()
	old, ud := j.cid, j.ud
	j.cid, j.ud = c.addCompleter(j), nil
	j.mu.Unlock()
	c.dropCompleter(old)
	j.closeUD(ud)
	j.flushPosted()
	srqSGE := j.maxSGE
	if j.mode == provider.UM {
		srqSGE++
	}
	srq, err := c.vc.NewSRQ(j.depth, srqSGE, uintptr(j.val))
	if err != nil {
		return verbsErr("ibv_create_srq", err)
	}
	if err := j.rearmLimit(srq); err != nil {
		_ = srq.Destroy()
		return err
	}
	j.mu.Lock()
	gone := j.srq
	j.srq = srq
	j.mu.Unlock()
	if err := gone.Destroy(); err != nil {
		return verbsErr("destroy srq", err)
	}
	if j.mode == provider.UM {
		return j.openUD()
	}
	return nil
}

// dropConns disconnects every sender. No accept may start (the JFR is
// closed or not READY).
func (j *jfr) dropConns() {
	j.accepting.Wait()
	j.mu.Lock()
	conns := make([]*conn, 0, len(j.conns))
	for cn := range j.conns {
		conns = append(conns, cn)
	}
	j.conns = map[*conn]struct{}{}
	j.mu.Unlock()
	for _, cn := range conns {
		j.ctx.cm.drop(cn)
	}
}

// accept attaches a responder QP for a connection to this JFR.
func (j *jfr) attach(cn *conn, from provider.JettyID) {
	j.mu.Lock()
	j.conns[cn] = struct{}{}
	j.mu.Unlock()
	j.pmu.Lock()
	j.peers[cn.qp.Num] = from
	j.pmu.Unlock()
}

func (j *jfr) detach(cn *conn) {
	j.mu.Lock()
	delete(j.conns, cn)
	j.mu.Unlock()
}

func (j *jfr) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if j.closed.Load() {
		return errClosed("jfr")
	}
	if n := j.users.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfr is shared by %d jetties", n)
	}
	if err := j.src.Busy(); err != nil {
		return err
	}
	return j.forceClose()
}

// forceClose disconnects every peer (their requests then fail with a
// remote error) and destroys the SRQ.
func (j *jfr) forceClose() error {
	// Closed under mu, where beginAccept looks: no accept starts after
	// this, and those that started are waited for.
	j.mu.Lock()
	if j.closed.Swap(true) {
		j.mu.Unlock()
		return nil
	}
	j.mu.Unlock()
	j.dropConns()
	j.flushPosted()
	c := j.ctx
	c.hub.unwatchObj(j.val)
	c.events.Forget(&j.src)
	if j.jetty == nil {
		c.dropID(j.id)
		c.untrack(j)
	}
	j.closeUD(j.ud)
	err := j.srq.Destroy()
	c.dropCompleter(j.cid)
	j.jfc.users.Add(-1)
	if err != nil {
		return verbsErr("destroy srq", err)
	}
	return nil
}

// flushPosted completes the receives still posted, in posting order, as
// WR_FLUSH_ERR: the SRQ goes away without a completion for them, and the
// caller must hear of each (a view it named is released by its record).
// complete drops the device's completions from now on, so a receive
// that completed but was not polled is reported here, once.
func (j *jfr) flushPosted() {
	j.mu.Lock()
	defer j.mu.Unlock()
	free := make([]bool, len(j.slots))
	for _, f := range j.free {
		free[f] = true
	}
	var posted []uint32
	for slot := range j.slots {
		if !free[slot] {
			posted = append(posted, uint32(slot))
		}
	}
	slices.SortFunc(posted, func(a, b uint32) int { return cmp.Compare(j.seqs[a], j.seqs[b]) })
	for _, slot := range posted {
		cr := provider.CR{Status: provider.CRWRFlushErr, Opcode: provider.CROpSend, Flags: provider.CRFlagRecv,
			UserCtx: j.slots[slot], LocalID: j.id}
		if j.kind == provider.KindJetty {
			cr.Flags |= provider.CRFlagJetty
		}
		j.jfc.push(softRecord{cr: cr})
		j.free = append(j.free, slot)
	}
}

// beginAccept registers a connection being accepted onto the SRQ; false
// means the JFR is closing or not READY. The accept ends with
// accepting.Done.
func (j *jfr) beginAccept() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed.Load() || j.state != provider.StateReady {
		return false
	}
	j.accepting.Add(1)
	return true
}

// crStatus maps a verbs completion status to a URMA one.
func crStatus(s uint32) provider.CRStatus {
	switch s {
	case verbs.WCSuccess:
		return provider.CRSuccess
	case verbs.WCLocLenErr:
		return provider.CRLocLenErr
	case verbs.WCLocProtErr, verbs.WCLocAccErr:
		return provider.CRLocAccessErr
	case verbs.WCLocQPOpErr:
		return provider.CRLocOperationErr
	case verbs.WCRemAccErr:
		return provider.CRRemAccessAbortErr
	case verbs.WCRemInvReq, verbs.WCRemOpErr:
		return provider.CRRemOperationErr
	case verbs.WCRetryExc, verbs.WCRespTimeout:
		return provider.CRAckTimeoutErr
	case verbs.WCRNRRetryExc:
		return provider.CRRNRRetryCntExcErr
	case verbs.WCFlushErr:
		return provider.CRWRFlushErr
	case verbs.WCRemAbortErr:
		return provider.CRRemAccessAbortErr
	case verbs.WCBadRespErr:
		return provider.CRRemOperationErr
	}
	return provider.CRLocOperationErr
}
