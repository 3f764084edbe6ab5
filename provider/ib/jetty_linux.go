//go:build cgo && urma_verbs

package ib

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/jgroup"
)

// jetty is a send queue with a receive queue (its own SRQ or a shared
// JFR's). In RC mode its one connection is the Jetty's QP, sending into
// the send JFC and receiving from the SRQ; it is made by whichever side
// binds first, and the other side's Bind adopts it.
type jetty struct {
	ctx      *ibContext
	id       uint32
	sq       *sendq
	rq       *jfr
	sharedRQ bool
	closed   atomic.Bool

	mu    sync.Mutex
	bound *remote
	cn    *conn
	peer  provider.JettyID // the jetty at the other end of cn
	// dialing is set while connect dials the bound jetty, accepting while
	// acceptBind sets up a connection from it.
	dialing, accepting bool
	// retired holds connections acceptBind replaced while a post may
	// have been using them; they are dropped under sq.mu (dropRetired).
	retired    []*conn
	hasRetired atomic.Bool

	// group is the jetty group the Jetty is a member of, nil for none.
	group *jgroup.Group
}

func (c *ibContext) NewJetty(cfg provider.JettyConfig) (provider.Jetty, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	j := &jetty{ctx: c}
	if cfg.Send.Owner == nil {
		cfg.Send.Owner = cfg.Owner
	}
	sq, err := c.newSendq(cfg.Send, j)
	if err != nil {
		return nil, err
	}
	j.sq = sq
	j.id = c.newID(j)
	sq.id = j.id
	if cfg.SharedJFR != nil {
		rq, ok := cfg.SharedJFR.(*jfr)
		if !ok || rq.ctx != c || rq.jetty != nil {
			j.abort()
			return nil, provider.Errorf(provider.ErrInvalid, "shared jfr of another context or provider")
		}
		if rq.closed.Load() {
			j.abort()
			return nil, errClosed("shared jfr")
		}
		if rq.mode != cfg.Send.Mode {
			j.abort()
			return nil, provider.Errorf(provider.ErrInvalid, "shared jfr is %v, jetty is %v", rq.mode, cfg.Send.Mode)
		}
		rq.users.Add(1)
		j.rq, j.sharedRQ = rq, true
	} else {
		rc := cfg.Recv
		rc.Mode = cfg.Send.Mode
		if rc.Owner == nil {
			rc.Owner = cfg.Owner
		}
		if j.rq, err = c.newJFR(rc, j.id, j); err != nil {
			j.abort()
			return nil, err
		}
	}
	if cfg.Group != nil {
		if err := c.joinGroup(j, cfg.Group); err != nil {
			_ = j.forceClose()
			return nil, err
		}
	}
	c.track(j)
	return j, nil
}

func (j *jetty) abort() {
	_ = j.sq.forceClose()
	j.ctx.dropID(j.id)
}

func (j *jetty) rank() int { return 0 }

func (j *jetty) Post(wrs []provider.WR) (int, error)  { return j.sq.Post(wrs) }
func (j *jetty) Flush(crs []provider.CR) (int, error) { return j.sq.Flush(crs) }
func (j *jetty) Advise(ctx context.Context, r provider.Remote) error {
	return j.sq.Advise(ctx, r)
}
func (j *jetty) Unadvise(r provider.Remote) error            { return j.sq.Unadvise(r) }
func (j *jetty) Query() (provider.QueueAttr, error)          { return j.sq.Query() }
func (j *jetty) Modify(s provider.State) error               { return j.sq.Modify(s) }
func (j *jetty) PostRecv(wrs []provider.RecvWR) (int, error) { return j.rq.PostRecv(wrs) }

func (j *jetty) Desc() provider.JettyDesc {
	return provider.JettyDesc{ID: provider.JettyID{EID: j.ctx.eid.eid, UASID: j.ctx.uasid, ID: j.id},
		Kind: provider.KindJetty, Mode: j.sq.mode, TokenPolicy: j.rq.policy}
}

func (j *jetty) boundRemote() *remote {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.bound
}

func (j *jetty) conn() *conn {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cn
}

func (j *jetty) Bind(ctx context.Context, p provider.Remote) error {
	if j.closed.Load() {
		return errClosed("jetty")
	}
	r, err := j.ctx.ownRemote(p)
	if err != nil {
		return err
	}
	switch {
	case j.sq.mode != provider.RC:
		return provider.Errorf(provider.ErrInvalid, "bind needs an RC jetty, this one is %v", j.sq.mode)
	case r.foreign:
		return provider.Errorf(provider.ErrInvalid, "an rdma_cm peer is reached by DialRDMACM or a listener's Accept, not Bind")
	case r.desc.Kind != provider.KindJetty || r.desc.Mode != provider.RC:
		return provider.Errorf(provider.ErrInvalid, "bind needs an RC jetty at the other end, not an %v %v", r.desc.Mode, r.desc.Kind)
	}
	j.sq.mu.Lock()
	defer j.sq.mu.Unlock()
	defer j.dropRetired() // those replaced while this dialed (see retireConn)
	j.mu.Lock()
	if j.bound != nil {
		j.mu.Unlock()
		return provider.Errorf(provider.ErrExist, "jetty is bound to %v", j.bound.desc.ID)
	}
	j.bound = r
	j.mu.Unlock()
	if _, err := j.connect(ctx, r); err != nil {
		j.mu.Lock()
		j.bound = nil
		j.mu.Unlock()
		return err
	}
	return nil
}

// connect returns the jetty's live connection to r, adopting one the peer
// made or making one. The caller holds sq.mu.
func (j *jetty) connect(ctx context.Context, r *remote) (*conn, error) {
	j.mu.Lock()
	if j.accepting && j.bound == r {
		// The peer's own Bind is being accepted: take its connection
		// rather than make a second one.
		j.mu.Unlock()
		if cn := j.awaitPeerConn(r.desc.ID, collisionWait); cn != nil {
			return cn, nil
		}
		j.mu.Lock()
	}
	if cn := j.cn; cn != nil && !cn.dead.Load() {
		peer := j.peer
		j.mu.Unlock()
		if peer != r.desc.ID {
			return nil, provider.Errorf(provider.ErrBusy, "jetty is connected to %v", peer)
		}
		return cn, nil
	}
	if r.foreign {
		j.mu.Unlock()
		return nil, provider.Errorf(provider.ErrClosed, "connection to rdma_cm peer %v is gone", r.desc.ID.EID)
	}
	old := j.cn
	j.cn = nil
	j.dialing = true
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.dialing = false
		j.mu.Unlock()
	}()
	c := j.ctx
	if old != nil {
		c.cm.drop(old)
		j.sq.connGone(old)
	}
	req := request{op: opBind, target: r.desc.ID.ID, token: r.token, kind: provider.KindJetty, mode: provider.RC,
		policy: r.desc.TokenPolicy, srcEID: c.eid.eid, srcUASID: c.uasid, srcID: j.id, rnrTimer: j.sq.rnrTimer, rnrRetry: j.sq.rnrRetry}
	deadline := time.Now().Add(connectTimeout)
	for {
		d, err := c.dial(ctx, r.desc.ID.EID, r.desc.ID.UASID, req, j.makeQP)
		if err != nil {
			return nil, err
		}
		if d.reply.status == replyCollision {
			// The peer binds to this Jetty at the same moment, and its
			// connection is the one to keep: acceptBind takes it.
			if cn := j.awaitPeerConn(r.desc.ID, collisionWait); cn != nil {
				return cn, nil
			}
			if time.Now().After(deadline) {
				return nil, provider.Errorf(provider.ErrBusy, "bind to %v: the peer binds to this jetty too, and its connection did not arrive", r.desc)
			}
			continue // the peer still held a connection this side dropped: ask again
		}
		if err := d.reply.err("bind to " + r.desc.String()); err != nil {
			return nil, err
		}
		cn := &conn{id: d.id, qp: d.qp, dialed: true}
		j.mu.Lock()
		other, peer := j.cn, j.peer
		j.mu.Unlock()
		if other != nil && !other.dead.Load() && peer == r.desc.ID && !lowerID(j.Desc().ID, peer) {
			// acceptBind took the peer's connection meanwhile, and the
			// lower ID's (the peer's) is the one both ends keep.
			c.cm.drop(cn)
			return other, nil
		}
		j.adopt(cn, r.desc.ID)
		if other != nil {
			j.mu.Lock()
			j.retireLocked(other)
			j.mu.Unlock()
		}
		return cn, nil
	}
}

// collisionWait is how long a Bind refused for crossing the peer's own
// waits for the peer's connection before it asks again.
const collisionWait = 500 * time.Millisecond

// awaitPeerConn waits up to d for acceptBind to give the Jetty a live
// connection to peer.
func (j *jetty) awaitPeerConn(peer provider.JettyID, d time.Duration) *conn {
	for end := time.Now().Add(d); ; time.Sleep(time.Millisecond) {
		j.mu.Lock()
		cn, p := j.cn, j.peer
		j.mu.Unlock()
		if cn != nil && !cn.dead.Load() && p == peer {
			return cn
		}
		if time.Now().After(end) {
			return nil
		}
	}
}

// collides reports whether a Bind from peer crosses this Jetty's own Bind
// to it: it is dialing the peer, or holds a live connection it dialed.
// Both ends must then keep one connection, and they keep the one the
// lower Jetty ID dialed; without the rule each end would take the other's
// connection, and a request already running on the one dropped would be
// lost.
// The caller holds j.mu.
func (j *jetty) collides(peer provider.JettyID) bool {
	if !lowerID(j.Desc().ID, peer) {
		return false
	}
	if j.dialing && j.bound != nil && j.bound.desc.ID == peer {
		return true
	}
	return j.cn != nil && j.cn.dialed && !j.cn.dead.Load() && j.peer == peer
}

// lowerID orders Jetty IDs by EID, then UASID, then ID.
func lowerID(a, b provider.JettyID) bool {
	if c := bytes.Compare(a.EID[:], b.EID[:]); c != 0 {
		return c < 0
	}
	if a.UASID != b.UASID {
		return a.UASID < b.UASID
	}
	return a.ID < b.ID
}

// makeQP creates the Jetty's RC QP on a connection's id.
func (j *jetty) makeQP(id verbs.CMID) (*verbs.QP, error) {
	if err := j.sq.setAckTimeout(id); err != nil {
		return nil, err
	}
	caps := verbs.QPCaps{MaxSendWR: j.sq.sqSize(), MaxSendSGE: j.sq.maxSGE, MaxInline: j.sq.maxInline}
	qp, err := id.CreateQP(j.ctx.vc, j.sq.jfc.cq, j.rq.jfc.cq, j.rq.srq, caps)
	if err != nil {
		return nil, verbsErr("create QP", err)
	}
	return qp, nil
}

// adopt makes cn the Jetty's connection to peer.
func (j *jetty) adopt(cn *conn, peer provider.JettyID) {
	j.watch(cn)
	j.rq.attach(cn, peer)
	j.mu.Lock()
	j.cn, j.peer = cn, peer
	j.mu.Unlock()
}

// watch hangs cn up when its QP fails. A responder calls it before it
// accepts: on iWARP the first request may already fail, and nobody else
// tells the initiator.
func (j *jetty) watch(cn *conn) {
	c := j.ctx
	cn.down = func() {
		j.sq.connDown(cn)
		if cn.ended != nil {
			cn.ended()
		}
	}
	c.cm.register(cn)
	c.hub.watchQP(cn.qp.Num, func(verbs.AsyncEvent) {
		j.sq.connDown(cn)
		c.cm.hangUp(cn)
		if cn.ended != nil {
			cn.ended()
		}
	})
}

// retireConn takes the Jetty's connection away for acceptBind. That runs
// on the rdma_cm goroutine without sq.mu, while a post may be using the
// connection's QP: destroying the QP there would crash in ibv_post_send.
// So the connection is dropped under sq.mu, at once if it is free,
// otherwise by its holder: Post and Bind end with dropRetired, and Unbind,
// Modify and Close drop through dropConn. acceptBind cannot wait for
// sq.mu: a Bind holds it while it dials, and two jetties binding to each
// other would each wait for the other's rdma_cm goroutine.
func (j *jetty) retireConn() {
	j.mu.Lock()
	if cn := j.cn; cn != nil {
		j.cn = nil
		j.retireLocked(cn)
	}
	j.mu.Unlock()
	if j.sq.mu.TryLock() {
		j.dropRetired()
		j.sq.mu.Unlock()
	}
}

// retireLocked queues cn for dropRetired. The caller holds j.mu.
func (j *jetty) retireLocked(cn *conn) {
	j.retired = append(j.retired, cn)
	j.hasRetired.Store(true)
}

// dropRetired drops the connections retireConn took away. The caller
// holds sq.mu.
func (j *jetty) dropRetired() {
	if !j.hasRetired.Load() {
		return
	}
	j.mu.Lock()
	old := j.retired
	j.retired = nil
	j.hasRetired.Store(false)
	j.mu.Unlock()
	for _, cn := range old {
		j.ctx.cm.drop(cn) // before detach: see acceptConn
		j.rq.detach(cn)
		if !j.closed.Load() { // a closing queue reports all it holds
			j.sq.connGone(cn)
		}
	}
}

// dropConn drops the Jetty's connection and any it retired. The caller
// holds sq.mu, so that no post uses the QPs it destroys.
func (j *jetty) dropConn() {
	j.dropRetired()
	j.mu.Lock()
	cn := j.cn
	j.cn = nil
	j.mu.Unlock()
	if cn != nil {
		j.ctx.cm.drop(cn) // before detach: see acceptConn
		j.rq.detach(cn)
		if !j.closed.Load() { // a closing queue reports all it holds
			j.sq.connGone(cn)
		}
	}
}

func (j *jetty) Unbind() error {
	if j.closed.Load() {
		return errClosed("jetty")
	}
	j.sq.mu.Lock()
	defer j.sq.mu.Unlock()
	j.mu.Lock()
	if j.bound == nil {
		j.mu.Unlock()
		return provider.Errorf(provider.ErrInvalid, "jetty is not bound")
	}
	j.bound = nil
	j.mu.Unlock()
	j.dropConn()
	return nil
}

// acceptBind answers a peer's Bind: the connection becomes this Jetty's,
// unless it is bound or connected to another jetty.
func (j *jetty) acceptBind(id verbs.CMID, from provider.JettyID, r request) error {
	j.mu.Lock()
	busy := j.bound != nil && j.bound.desc.ID != from || j.cn != nil && !j.cn.dead.Load() && j.peer != from
	collide := !busy && j.collides(from)
	old := j.cn
	if !busy && !collide {
		j.accepting = true
		defer func() {
			j.mu.Lock()
			j.accepting = false
			j.mu.Unlock()
		}()
	}
	j.mu.Unlock()
	if busy {
		return provider.Errorf(provider.ErrExist, "jetty %d is bound to another jetty", j.id)
	}
	if collide {
		return provider.Errorf(provider.ErrAgain, "jetty %d binds to %v too: its own connection is kept", j.id, from)
	}
	if old != nil {
		j.retireConn()
	}
	qp, err := j.makeQP(id)
	if err != nil {
		return err
	}
	cn := &conn{id: id, qp: qp}
	// The peer may send as soon as it sees the accept: know the sender of
	// this QP's receives, and watch the QP, first.
	j.rq.attach(cn, from)
	j.watch(cn)
	if err := id.Accept((&reply{id: j.id}).marshal(), rdAtomic(j.ctx), int(r.rnrRetry)); err != nil {
		j.ctx.unwatch(cn)
		j.rq.detach(cn)
		id.DestroyQP()
		return verbsErr("accept", err)
	}
	j.ctx.setRNRTimer(qp, r.rnrTimer)
	j.mu.Lock()
	j.cn, j.peer = cn, from
	j.mu.Unlock()
	return nil
}

func (j *jetty) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if j.closed.Load() {
		return errClosed("jetty")
	}
	if err := j.sq.src.Busy(); err != nil {
		return err
	}
	if !j.sharedRQ {
		if err := j.rq.src.Busy(); err != nil {
			return err
		}
	}
	return j.forceClose()
}

func (j *jetty) forceClose() error {
	if j.closed.Swap(true) {
		return nil
	}
	if j.group != nil {
		j.group.Leave(j.id)
	}
	j.sq.mu.Lock()
	j.dropConn()
	j.sq.mu.Unlock()
	_ = j.sq.forceClose()
	if j.sharedRQ {
		j.rq.users.Add(-1)
	} else {
		_ = j.rq.forceClose()
	}
	j.ctx.dropID(j.id)
	j.ctx.untrack(j)
	return nil
}

// acceptConn answers a connection request for an RM receiver or an RC
// Jetty; it runs on the context's rdma_cm goroutine.
func (c *ibContext) acceptConn(id verbs.CMID, r request, from provider.JettyID) error {
	rq, jt, err := c.receiver(r)
	if err != nil {
		return err
	}
	if !rq.beginAccept() {
		return provider.Errorf(provider.ErrNotFound, "%v %d is closed or not READY", r.kind, r.target)
	}
	defer rq.accepting.Done()
	if r.op == opBind {
		if jt == nil || rq.mode != provider.RC {
			return provider.Errorf(provider.ErrInvalid, "bind to something that is not an RC jetty")
		}
		return jt.acceptBind(id, from, r)
	}
	if rq.mode == provider.RC {
		return provider.Errorf(provider.ErrInvalid, "RC jetties are reached by Bind")
	}
	qp, err := id.CreateQP(c.vc, c.ctl, rq.jfc.cq, rq.srq, verbs.QPCaps{MaxSendWR: 1, MaxSendSGE: 1})
	if err != nil {
		return verbsErr("create QP", err)
	}
	cn := &conn{id: id, qp: qp}
	cn.down = func() {
		// Destroy the QP before the JFR forgets it: a JFR closing
		// meanwhile then waits for this drop (see conn.dropOnce) before
		// it destroys its SRQ, which refuses while a QP is attached.
		c.cm.drop(cn)
		rq.detach(cn)
	}
	rq.attach(cn, from) // before the peer can send, see acceptBind
	c.cm.register(cn)
	c.hub.watchQP(qp.Num, func(verbs.AsyncEvent) { c.cm.hangUp(cn) })
	if err := id.Accept((&reply{id: rq.id}).marshal(), rdAtomic(c), int(r.rnrRetry)); err != nil {
		c.unwatch(cn)
		rq.detach(cn)
		id.DestroyQP()
		return verbsErr("accept", err)
	}
	c.setRNRTimer(qp, r.rnrTimer)
	return nil
}

// unwatch undoes the registration of a connection that was not accepted.
func (c *ibContext) unwatch(cn *conn) {
	c.hub.unwatchQP(cn.qp.Num)
	c.cm.mu.Lock()
	delete(c.cm.conns, cn.id)
	c.cm.mu.Unlock()
}

// setRNRTimer sets the pause a responder QP asks of an RNR-retrying peer.
// iWARP has no RNR, and soft-iWARP must not see a modify of a connected
// QP: while it holds the QP's state lock, a segment arriving is left
// unread in the socket until another one comes, so the first request on
// a fresh connection could wait forever.
func (c *ibContext) setRNRTimer(qp *verbs.QP, code uint8) {
	if !c.dev.iwarp {
		_ = qp.SetRNRTimer(code)
	}
}
