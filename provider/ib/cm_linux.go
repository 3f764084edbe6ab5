//go:build cgo && urma_verbs

package ib

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// Connection timeouts. Address resolution may wait for ARP or neighbour
// discovery, which the kernel retries within resolveTimeout; a connect
// waits for the peer's provider goroutine to answer.
//
// The kernel always ends a resolution with an event, resolved or failed,
// by resolveTimeout; our wait for it is only a guard against a lost event.
// The event comes from a kernel work queue, which on a loaded machine (a
// software-emulated guest running tests in parallel) can run seconds
// late, so the guard waits resolveSlack longer than the kernel.
const (
	resolveTimeout = 5 * time.Second
	resolveSlack   = 10 * time.Second
	connectTimeout = 10 * time.Second
)

// conn is one RC connection: an initiator QP of a send queue, or a
// responder QP attached to a JFR's SRQ or a Jetty.
type conn struct {
	id   verbs.CMID
	qp   *verbs.QP
	dead atomic.Bool
	// dialed says this side made the connection (a Jetty's Bind); see
	// jetty.collides.
	dialed bool
	// pending counts the signaled requests of the owning send queue still
	// running on this QP, under the queue's lock (see sendq.retire).
	pending int
	// down runs once when the peer disconnects or the connection fails.
	down func()
	// ended, when set, runs after down or a fatal QP event: it closes a
	// plain rdma_cm peer's Done channel, and must be idempotent.
	ended func()
	// dropOnce makes drop run once: a queue's close and the peer's
	// disconnect can both reach it, and a second rdma_destroy_qp on the id
	// crashes in librdmacm. A second caller waits for the first to finish,
	// since a JFR destroys its SRQ only after its QPs are gone.
	dropOnce sync.Once
	// qpMu orders drop's destroy of the QP against toError from failure
	// paths on other goroutines; qpGone says the QP is destroyed.
	qpMu   sync.Mutex
	qpGone bool
}

// toError moves the QP to ERROR unless drop destroyed it already.
func (cn *conn) toError() {
	cn.qpMu.Lock()
	defer cn.qpMu.Unlock()
	if !cn.qpGone && cn.qp != nil {
		_ = cn.qp.ToError()
	}
}

// cmServer is a context's listener and the goroutine that answers the
// requests of peers, without the application taking part.
type cmServer struct {
	c      *ibContext
	ch     *verbs.EventChannel
	w      *verbs.Waiter
	listen verbs.CMID
	port   uint16
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	conns map[verbs.CMID]*conn
}

func startCMServer(c *ibContext) (*cmServer, error) {
	ch, w, id, err := cmListen(c.eid.addr, 0, c.scope(), 128, "rdma_cm events")
	if err != nil {
		return nil, err
	}
	s := &cmServer{c: c, ch: ch, w: w, listen: id, port: id.SrcPort(), done: make(chan struct{}), conns: map[verbs.CMID]*conn{}}
	go s.loop()
	return s, nil
}

// cmListen opens an event channel, a waiter on it named name, and an id on
// it listening at (a, port) with backlog: the set-up of the context's URMA
// listener and of a plain rdma_cm one. On failure nothing is left open.
func cmListen(a netip.Addr, port uint16, scope uint32, backlog int, name string) (*verbs.EventChannel, *verbs.Waiter, verbs.CMID, error) {
	ch, err := verbs.NewEventChannel()
	if err != nil {
		return nil, nil, verbs.CMID{}, verbsErr("create rdma_cm channel", err)
	}
	var w *verbs.Waiter
	var id verbs.CMID
	fail := func(err error) (*verbs.EventChannel, *verbs.Waiter, verbs.CMID, error) {
		if !id.IsZero() {
			_ = id.Destroy()
		}
		if w != nil {
			_ = w.Close()
		}
		ch.Destroy()
		return nil, nil, verbs.CMID{}, err
	}
	if w, err = verbs.NewWaiter(ch.FD(), name); err != nil {
		return fail(verbsErr("watch rdma_cm channel", err))
	}
	if id, err = ch.NewID(); err != nil {
		return fail(verbsErr("create rdma_cm id", err))
	}
	if err := id.Bind(a, port, scope); err != nil {
		return fail(verbsErr("bind "+netip.AddrPortFrom(a, port).String()+" (is the address's interface in this network namespace?)", err))
	}
	if err := id.Listen(backlog); err != nil {
		return fail(verbsErr("listen", err))
	}
	return ch, w, id, nil
}

func (c *ibContext) scope() uint32 {
	if c.eid.addr.Is6() && c.eid.addr.IsLinkLocalUnicast() {
		return uint32(c.eid.ifindex)
	}
	return 0
}

// sourceFor picks the address a connection to dst leaves from: the
// context's own, or another EID of the device when the families differ
// (an IPv4 EID cannot reach an IPv6 one). It returns the scope for a
// link-local destination too.
func (c *ibContext) sourceFor(dst netip.Addr) (netip.Addr, uint32) {
	e := c.sourceEntry(dst)
	var scope uint32
	if e.addr.Is6() && (e.addr.IsLinkLocalUnicast() || dst.IsLinkLocalUnicast()) {
		scope = uint32(e.ifindex)
	}
	return e.addr, scope
}

// sourceEntry is the EID whose address sourceFor returns.
func (c *ibContext) sourceEntry(dst netip.Addr) eidEntry {
	if c.eid.addr.Is4() == dst.Is4() {
		return c.eid
	}
	for _, e := range c.dev.eids {
		if e.addr.Is4() == dst.Is4() {
			return e
		}
	}
	return c.eid
}

// stop ends the goroutine, disconnects what is left and frees the
// listener. Connections belong to queues, which destroy them first.
func (s *cmServer) stop() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		_ = s.w.Close()
		<-s.done
		_ = s.listen.Destroy()
		s.ch.Destroy()
	})
}

func (s *cmServer) loop() {
	defer close(s.done)
	for {
		err := s.w.Wait(time.Time{}, func() bool {
			for {
				ev, ok, err := s.ch.GetEvent()
				if err != nil || !ok {
					return false
				}
				s.handle(ev)
			}
		})
		if err != nil {
			return
		}
	}
}

func (s *cmServer) handle(ev verbs.CMEvent) {
	switch ev.Type {
	case verbs.CMConnectRequest:
		s.request(ev)
	case verbs.CMDisconnected, verbs.CMDeviceRemoval:
		s.lost(ev.ID, true)
	case verbs.CMConnectError, verbs.CMUnreachable, verbs.CMRejected:
		s.lost(ev.ID, false)
	}
}

// lost handles the end of a connection. Events are acknowledged as they
// are read, so an id may be destroyed by drop on another goroutine before
// its event is handled: only an id still registered is touched, under the
// lock drop takes before destroying.
func (s *cmServer) lost(id verbs.CMID, answer bool) {
	s.mu.Lock()
	cn := s.conns[id]
	if cn != nil && answer {
		// On InfiniBand's CM the peer waits for our own disconnect (DREP).
		_ = id.Disconnect()
	}
	s.mu.Unlock()
	if cn != nil && !cn.dead.Swap(true) && cn.down != nil {
		cn.down()
	}
}

// hangUp disconnects a connection whose QP failed, so that the peer
// learns at once (iWARP peers otherwise wait on an open TCP stream).
func (s *cmServer) hangUp(cn *conn) {
	s.mu.Lock()
	if s.conns[cn.id] == cn {
		_ = cn.id.Disconnect()
	}
	s.mu.Unlock()
}

func (s *cmServer) register(cn *conn) {
	s.mu.Lock()
	s.conns[cn.id] = cn
	s.mu.Unlock()
}

// drop forgets a connection and destroys its QP and id, once.
func (s *cmServer) drop(cn *conn) { cn.dropOnce.Do(func() { s.dropNow(cn) }) }

func (s *cmServer) dropNow(cn *conn) {
	s.mu.Lock()
	delete(s.conns, cn.id)
	s.mu.Unlock()
	cn.dead.Store(true)
	_ = cn.id.Disconnect()
	if cn.qp != nil {
		s.c.hub.unwatchQP(cn.qp.Num)
		cn.qpMu.Lock()
		cn.qpGone = true
		cn.id.DestroyQP()
		cn.qpMu.Unlock()
	}
	_ = cn.id.Destroy()
}

func (s *cmServer) request(ev verbs.CMEvent) {
	c := s.c
	req, err := parseRequest(ev.PrivateData)
	if err == nil && c.closed.Load() {
		err = errClosed("context")
	}
	if err != nil {
		s.refuse(ev.ID, reply{status: replyCode(err)})
		return
	}
	switch req.op {
	case opImportSegment:
		rep, err := c.answerSegmentImport(req)
		if err != nil {
			rep.status = replyCode(err)
		}
		s.refuse(ev.ID, rep)
	case opImportJetty:
		rep, err := c.answerJettyImport(req)
		if err != nil {
			rep.status = replyCode(err)
		}
		s.refuse(ev.ID, rep)
	case opDatagram:
		rep, err := c.answerDatagram(req)
		if err != nil {
			rep.status = replyCode(err)
		}
		s.refuse(ev.ID, rep)
	case opPing:
		// Answered as imports are, and nothing is kept.
		s.refuse(ev.ID, pingReply(req))
	case opResolvePort:
		// The port is this context's UASID, which publishes nothing.
		s.refuse(ev.ID, reply{status: replyNotFound})
	case opConnect, opBind:
		src := provider.JettyID{EID: req.srcEID, UASID: req.srcUASID, ID: req.srcID}
		if err := c.acceptConn(ev.ID, req, src); err != nil {
			provider.Logf(provider.LogInfo, "ib %v: refused connection from %v: %v", c, src, err)
			s.refuse(ev.ID, reply{status: replyCode(err)})
		}
	}
}

// refuse answers a request with a reject carrying rep, which is also how
// imports are answered.
func (s *cmServer) refuse(id verbs.CMID, rep reply) {
	_ = id.Reject(rep.marshal())
	_ = id.Destroy()
}

// dialed is the outcome of a connect: an established connection, or the
// peer's reply in a reject.
type dialed struct {
	id    verbs.CMID
	qp    *verbs.QP
	reply reply
	// data is the reject's private data, reply and what follows it.
	data []byte
}

// dial connects to the context at (dst, port) with request req; once ctx
// is done it returns ContextErr(ctx), having made nothing. makeQP
// creates the initiator's QP on the resolved id. An import is answered by
// a reject, so the returned id is zero and only reply is set; an accepted
// connection returns the id and QP, handed over to the context's
// rdma_cm goroutine.
func (c *ibContext) dial(ctx context.Context, dst provider.EID, port uint32, req request, makeQP func(verbs.CMID) (*verbs.QP, error)) (dialed, error) {
	if port == 0 || port > 0xffff {
		return dialed{}, provider.Errorf(provider.ErrNotFound, "no context with uasid %d: uasids are rdma_cm ports", port)
	}
	rnr := 7
	if req.op == opConnect || req.op == opBind {
		rnr = int(req.rnrRetry)
	}
	to := netip.AddrPortFrom(dst.Addr().Unmap(), uint16(port))
	for attempt := 1; ; attempt++ {
		if err := provider.ContextErr(ctx); err != nil {
			return dialed{}, err
		}
		d, rejected, err := c.connectCM(ctx, to, req.marshal(), rnr, rdAtomic(c), makeQP)
		if err != nil && ctx.Err() != nil {
			return d, provider.ContextErr(ctx)
		}
		if err != nil || rejected == nil {
			return d, err
		}
		rep, perr := parseReply(rejected.PrivateData)
		if perr == nil {
			return dialed{reply: rep, data: rejected.PrivateData}, nil
		}
		if !answerLost(rejected) {
			return dialed{}, provider.Errorf(provider.ErrNotFound, "no urma context listens at %s (rdma_cm reject, status %d)", to, rejected.Status)
		}
		if attempt == dialAttempts {
			return dialed{}, provider.Errorf(provider.ErrFail, "%s reset the connection before its answer arrived, %d times in a row", to, attempt)
		}
		provider.Logf(provider.LogInfo, "ib %v: %s reset the connection before its answer arrived; asking again (%d of %d)", c, to, attempt+1, dialAttempts)
	}
}

// dialAttempts bounds how often dial asks again after a lost answer.
const dialAttempts = 4

// answerLost tells a reject that stands for an answer lost in transit from
// one that says nobody listens. soft-iWARP (siw) sends a reject's MPA
// reply and closes the TCP stream at once, and its connection manager may
// handle the close before the reply: the initiator then sees a reject with
// status -ECONNRESET and no private data, although a listener answered.
// Nobody listening is -ECONNREFUSED on iWARP and a CM reject reason on
// InfiniBand and RoCE. Asking again is safe: every request is answered the
// same way twice, and a connect that was refused leaves nothing behind.
func answerLost(ev *verbs.CMEvent) bool {
	return ev.Status == -int(syscall.ECONNRESET)
}

// connectCM resolves to, creates the QP with makeQP and connects with
// private data pdata. An established connection's id is migrated to the
// context's rdma_cm goroutine; a reject is returned as its event, with
// nothing left behind. ctx ends the wait for the connection early.
func (c *ibContext) connectCM(ctx context.Context, to netip.AddrPort, pdata []byte, rnr, rd int,
	makeQP func(verbs.CMID) (*verbs.QP, error)) (dialed, *verbs.CMEvent, error) {
	ch, err := verbs.NewEventChannel()
	if err != nil {
		return dialed{}, nil, verbsErr("create rdma_cm channel", err)
	}
	defer ch.Destroy()
	w, err := verbs.NewWaiter(ch.FD(), "rdma_cm connect")
	if err != nil {
		return dialed{}, nil, verbsErr("watch rdma_cm channel", err)
	}
	defer w.Close()
	stop := context.AfterFunc(ctx, func() { _ = w.Close() })
	defer stop()
	id, err := ch.NewID()
	if err != nil {
		return dialed{}, nil, verbsErr("create rdma_cm id", err)
	}
	var qp *verbs.QP
	keep := false
	defer func() {
		if !keep {
			if qp != nil {
				id.DestroyQP()
			}
			_ = id.Destroy()
		}
	}()
	where := to.String()
	// A wait cut short by ctx reports ctx's error, not a closed waiter.
	wait := func(want int, d time.Duration, what string) (verbs.CMEvent, error) {
		ev, err := waitCM(ch, w, want, d, what)
		if err != nil && ctx.Err() != nil {
			return ev, ctx.Err()
		}
		return ev, err
	}
	from, scope := c.sourceFor(to.Addr())
	if err := id.ResolveAddr(from, scope, to.Addr(), to.Port(), scope, int(resolveTimeout/time.Millisecond)); err != nil {
		return dialed{}, nil, verbsErr("resolve "+where, err)
	}
	if _, err := wait(verbs.CMAddrResolved, resolveTimeout+resolveSlack, "address of "+where); err != nil {
		return dialed{}, nil, err
	}
	if err := id.ResolveRoute(int(resolveTimeout / time.Millisecond)); err != nil {
		return dialed{}, nil, verbsErr("resolve route to "+where, err)
	}
	if _, err := wait(verbs.CMRouteResolved, resolveTimeout+resolveSlack, "route to "+where); err != nil {
		return dialed{}, nil, err
	}
	if !id.OnContext(c.vc) {
		return dialed{}, nil, provider.Errorf(provider.ErrInvalid, "%s is reached through another device than %s", where, c.dev.info.Name)
	}
	if qp, err = makeQP(id); err != nil {
		return dialed{}, nil, err
	}
	if err := id.Connect(pdata, 7, rnr, rd); err != nil {
		return dialed{}, nil, verbsErr("connect to "+where, err)
	}
	ev, err := wait(verbs.CMEstablished, connectTimeout, where)
	if err == nil && ev.Type == verbs.CMRejected {
		return dialed{}, &ev, nil
	}
	if err != nil {
		return dialed{}, nil, err
	}
	if err := id.Migrate(c.cm.ch); err != nil {
		_ = id.Disconnect()
		return dialed{}, nil, verbsErr("migrate rdma_cm id", err)
	}
	keep = true
	return dialed{id: id, qp: qp}, nil, nil
}

// waitCM waits for an event of type want; a reject is returned as an
// event with no error so the caller can read its reply.
func waitCM(ch *verbs.EventChannel, w *verbs.Waiter, want int, d time.Duration, where string) (verbs.CMEvent, error) {
	var ev verbs.CMEvent
	var gerr error
	err := w.Wait(time.Now().Add(d), func() bool {
		e, ok, err := ch.GetEvent()
		if err != nil {
			gerr = err
			return true
		}
		ev = e
		return ok
	})
	switch {
	case gerr != nil:
		return ev, verbsErr("rdma_cm event", gerr)
	case err == verbs.ErrTimeout:
		return ev, provider.Errorf(provider.ErrTimeout, "no answer from %s within %v", where, d)
	case err != nil:
		return ev, verbsErr("rdma_cm event", err)
	case ev.Type == want, ev.Type == verbs.CMRejected:
		return ev, nil
	case ev.Type == verbs.CMAddrError, ev.Type == verbs.CMRouteError, ev.Type == verbs.CMUnreachable:
		return ev, provider.Errorf(provider.ErrNotFound, "%s unreachable (%s, status %d)", where, verbs.CMEventName(ev.Type), ev.Status)
	}
	return ev, provider.Errorf(provider.ErrFail, "%s: %s (status %d) while waiting for %s", where,
		verbs.CMEventName(ev.Type), ev.Status, verbs.CMEventName(want))
}

// rdAtomic is the number of outstanding RDMA READ and atomic requests a
// connection allows each way.
func rdAtomic(c *ibContext) int {
	return min(16, max(1, c.dev.info.Attr.MaxQPRdAtom), max(1, c.dev.info.Attr.MaxQPInitRdAtom))
}
