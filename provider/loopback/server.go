package loopback

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
	"github.com/urma-go/sdk/spin"
)

// ctlServer answers the control requests of importing processes on the
// context's unix socket.
type ctlServer struct {
	c       *lbContext
	ln      *net.UnixListener
	path    string
	closing chan struct{} // closed by stop
	mu      sync.Mutex
	conns   map[*ctlConn]struct{}
	done    bool
	// retired are the connections that ended while the context closed:
	// their count pages are read until its segments are gone (release).
	retired []*ctlConn
	// serving counts connection handlers, so that stop returns only when
	// none can still hand out a descriptor of the closing context.
	serving sync.WaitGroup
	// fails limits the failed token checks of all connections together,
	// refused logs the connections refused; both keep a flood of them
	// from costing more than a trickle.
	fails    failLimiter
	refused  logLimiter
	refusals atomic.Uint64
	maxConns int
}

// ctlConn is one importer's connection and what it may ask for. Only its
// serve goroutine touches rqs and jfcs.
type ctlConn struct {
	conn *net.UnixConn
	pid  int32 // from SO_PEERCRED, not from anything the peer said
	// rqs are the receive queues it imported with their token: it may
	// reach the buffers posted to them. jfcs are their JFCs, whose
	// overflow it may report.
	rqs   map[uint32]struct{}
	jfcs  map[uint32]struct{}
	fails failLimiter

	mu sync.Mutex
	// counts is the page where the peer counts its accesses to caller
	// memory, made at its HELLO; caller are the caller-memory segments
	// handed to it (handle to generation), the only counts read.
	counts *countPage
	caller map[uint32]uint32
	// stuck counts the segments quarantined because this peer's count
	// stayed up; it is not waited for again.
	stuck atomic.Int32
}

// maxStuck is how many segments one peer may hold in quarantine: past it,
// its connection is dropped, which lets them all go.
const maxStuck = 16

// release unmaps the connection's count page; its quarantined segments go.
func (cc *ctlConn) release() {
	cc.mu.Lock()
	counts := cc.counts
	cc.counts, cc.caller = nil, nil
	cc.mu.Unlock()
	unquarantine(cc)
	if counts != nil {
		counts.m.Close()
	}
}

// countPage is the connection's count page, made at its first HELLO.
func (cc *ctlConn) countPage() (*countPage, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.counts == nil {
		p, err := newCountPage()
		if err != nil {
			return nil, err
		}
		cc.counts = p
	}
	return cc.counts, nil
}

// grantCaller records that the peer got caller memory h of generation gen.
func (cc *ctlConn) grantCaller(h, gen uint32) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.caller == nil {
		cc.caller = map[uint32]uint32{}
	}
	cc.caller[h] = gen
}

// count is the peer's count of accesses to h of generation gen, if it
// holds that memory; forget drops the grant.
func (cc *ctlConn) count(h, gen uint32, forget bool) (*atomic.Int32, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	g, ok := cc.caller[h]
	if !ok || g != gen || cc.counts == nil {
		return nil, false
	}
	if forget {
		delete(cc.caller, h)
	}
	return cc.counts.count(h), true
}

func newCtlConn(conn *net.UnixConn, pid int32) *ctlConn {
	return &ctlConn{conn: conn, pid: pid, rqs: map[uint32]struct{}{}, jfcs: map[uint32]struct{}{},
		fails: failLimiter{burst: connFailBurst, every: connFailEvery}}
}

// listen binds the context's socket. The socket is bound under a temporary
// name and linked to its final name only once it listens, so a sweeper that
// finds a final name without a listener knows its owner is gone; the link
// also fails rather than replace a live context's socket.
func (c *lbContext) listen() error {
	final := filepath.Join(c.dir, sockName(c.eid, c.uasid))
	tmp := filepath.Join(c.dir, fmt.Sprintf(".%d-%s.tmp", os.Getpid(), sockName(c.eid, c.uasid)))
	if len(final) >= len(unix.RawSockaddrUnix{}.Path) {
		return provider.Errorf(provider.ErrInvalid, "loopback socket path %s is too long; set %s to a shorter directory", final, EnvRuntimeDir)
	}
	maxConns, err := maxPeers()
	if err != nil {
		return err
	}
	os.Remove(tmp)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return provider.Errorf(provider.ErrFail, "loopback control socket: %v", err)
	}
	ln.SetUnlinkOnClose(false)
	err = os.Link(tmp, final)
	os.Remove(tmp)
	if err != nil {
		ln.Close()
		if errors.Is(err, os.ErrExist) {
			return provider.Errorf(provider.ErrExist, "loopback socket %s exists", final)
		}
		return provider.Errorf(provider.ErrFail, "loopback control socket: %v", err)
	}
	s := &ctlServer{c: c, ln: ln, path: final, closing: make(chan struct{}), conns: map[*ctlConn]struct{}{},
		fails: failLimiter{burst: contextFailBurst, every: contextFailEvery}, maxConns: maxConns}
	c.srv = s
	go s.accept()
	return nil
}

// accept takes connections until the listener closes. Any other error (no
// descriptors left, a connection aborted before it was taken) is the
// moment's, not the listener's: it backs off and listens on.
func (s *ctlServer) accept() {
	var backoff time.Duration
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			if s.refused.allow() {
				provider.Logf(provider.LogWarning, "loopback: accept on %s: %v; retrying in %v", s.path, err, backoff)
			}
			select {
			case <-time.After(backoff):
				continue
			case <-s.closing:
				return
			}
		}
		backoff = 0
		cred, err := checkPeerUID(conn, s.c.uid, "a process connecting to "+s.path)
		if err != nil {
			if s.refused.allow() {
				provider.Logf(provider.LogWarning, "loopback: refused: %v", err)
			}
			conn.Close()
			continue
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			conn.Close()
			return
		}
		if n := len(s.conns); n >= s.maxConns {
			s.mu.Unlock()
			if s.refused.allow() {
				provider.Logf(provider.LogWarning, "loopback: %s has %d connections, the limit (%s); refused pid %d", s.path, n, EnvMaxPeers, cred.Pid)
			}
			conn.Close()
			continue
		}
		cc := newCtlConn(conn, cred.Pid)
		s.conns[cc] = struct{}{}
		s.serving.Add(1)
		s.mu.Unlock()
		go s.serve(cc)
	}
}

// anyStopped reports whether a process connected to the context is
// stopped, and so may hold a slot of one of its rings that it will finish.
func (s *ctlServer) anyStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cc := range s.conns {
		if cc.pid > 0 && stopped(cc.pid) {
			return true
		}
	}
	return false
}

// stop tells every importer that the context is closing, then closes the
// socket and removes its file. An importer that does not read gets no
// goodbye after byeTimeout: nothing a peer does makes Close wait longer.
func (s *ctlServer) stop() {
	s.mu.Lock()
	s.done = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	close(s.closing)
	os.Remove(s.path)
	s.ln.Close()
	deadline := time.Now().Add(byeTimeout)
	for cc := range conns {
		_ = cc.conn.SetWriteDeadline(deadline)
		_ = wire.Write(cc.conn, wire.Message{Type: wire.Bye})
		cc.conn.Close()
	}
	s.serving.Wait()
}

// release lets go of the connections that ended while the context closed,
// once its segments are gone.
func (s *ctlServer) release() {
	s.mu.Lock()
	retired := s.retired
	s.retired = nil
	s.mu.Unlock()
	for _, cc := range retired {
		cc.release()
	}
}

// drain waits, up to drainTimeout, until no peer that was handed seg (caller
// memory) counts an access to it, and returns the connections whose count
// stayed up. A connection that left a count up before is not waited for
// again, and one that did so maxStuck times is dropped: what a peer writes
// in its count page delays the owner by drainTimeout once, and keeps
// memory only until it disconnects.
func (s *ctlServer) drain(seg *segment) []*ctlConn {
	h, gen := seg.handle, seg.ref.gen
	s.mu.Lock()
	all := append(slices.Collect(maps.Keys(s.conns)), s.retired...)
	s.mu.Unlock()
	var stuck, waiting []*ctlConn
	var counts []*atomic.Int32
	for _, cc := range all {
		n, ok := cc.count(h, gen, true)
		switch {
		case !ok:
		case cc.stuck.Load() > 0 && n.Load() > 0:
			stuck = append(stuck, cc)
		default:
			waiting = append(waiting, cc)
			counts = append(counts, n)
		}
	}
	deadline := time.Now().Add(drainTimeout)
	var w spin.Wait // the accessor may be a process on this core
	for {
		busy := 0
		for i := range waiting {
			if counts[i].Load() > 0 {
				waiting[busy], counts[busy] = waiting[i], counts[i]
				busy++
			}
		}
		waiting, counts = waiting[:busy], counts[:busy]
		if busy == 0 || !time.Now().Before(deadline) {
			break
		}
		w.Idle()
		runtime.Gosched()
	}
	stuck = append(stuck, waiting...)
	for _, cc := range stuck {
		if cc.stuck.Add(1) == maxStuck+1 {
			provider.Logf(provider.LogWarning, "loopback: %s drops pid %d: it holds %d segments in quarantine", s.path, cc.pid, maxStuck)
			cc.conn.Close()
		}
	}
	return stuck
}

func (s *ctlServer) serve(cc *ctlConn) {
	conn := cc.conn
	defer func() {
		s.mu.Lock()
		_, mine := s.conns[cc] // false once stop took it: the context is closing
		delete(s.conns, cc)
		if !mine {
			s.retired = append(s.retired, cc)
		}
		s.mu.Unlock()
		conn.Close()
		if mine {
			cc.release()
		}
		if mine {
			// The importer may have died midway through one of our rings.
			s.c.scheduleRepair()
		}
		s.serving.Done()
	}()
	for {
		req, err := wire.Read(conn, wire.RequestLimit, partialTimeout)
		if err != nil {
			return
		}
		req.CloseFDs() // requests carry none; never keep what a peer slips in
		if req.Type == wire.Notify {
			s.notify(cc, req.Payload)
			continue
		}
		if req.Type == wire.NotifyLimit {
			s.notifyLimit(cc, req.Payload)
			continue
		}
		reply, fds := s.handle(cc, req)
		err = wire.Write(conn, reply)
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err != nil {
			return
		}
	}
}

// handle answers one request. The fds it returns are duplicates taken while
// the object was known to be alive; the caller closes them after sending.
func (s *ctlServer) handle(cc *ctlConn, req wire.Message) (wire.Message, []int) {
	c := s.c
	reply := wire.Message{Type: req.Type}
	fail := func(err error) (wire.Message, []int) {
		if errors.Is(err, provider.ErrPermission) {
			s.refuse(cc, err)
		}
		reply.Status = provider.StatusOf(err)
		if reply.Status == provider.StatusSuccess {
			reply.Status = provider.StatusFail
		}
		// The status travels on its own; keep only the detail.
		reply.Payload = []byte(strings.TrimSuffix(err.Error(), ": "+reply.Status.Error()))
		return reply, nil
	}
	w := wire.Buf{Bytes: req.Payload}
	switch req.Type {
	case wire.Hello:
		counts, err := cc.countPage()
		if err != nil {
			return fail(err)
		}
		page, err := shareFD(c.page.m.FD(), false)
		if err != nil {
			return fail(err)
		}
		fd, err := dupFD(counts.m.FD())
		if err != nil {
			unix.Close(page)
			return fail(err)
		}
		reply.Payload = (&wire.Buf{}).U32(uint32(os.Getpid())).Bytes
		reply.FDs = []int{page, fd}
		return reply, reply.FDs
	case wire.ImportSeg:
		var desc provider.SegmentDesc
		err := desc.UnmarshalBinary(w.Take(provider.SegmentDescSize))
		token := w.GetU32()
		// A request cut short of its token is malformed, not one for
		// token 0: a segment without a token policy would accept it.
		if err != nil || w.Short || len(w.Bytes) != 0 {
			return fail(provider.Errorf(provider.ErrInvalid, "malformed import request"))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		seg, err := c.findSegmentLocked(desc, token)
		if err != nil {
			return fail(err)
		}
		return s.segReply(cc, reply, seg, seg.desc.Access)
	case wire.SegFD:
		h, gen := w.GetU32(), w.GetU32()
		if w.Short || len(w.Bytes) != 0 {
			return fail(provider.Errorf(provider.ErrInvalid, "malformed segment request"))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		seg := c.segByHandle(h, gen)
		if seg == nil || seg.closed.Load() {
			return fail(provider.Errorf(provider.ErrNotFound, "no segment with handle %d generation %d", h, gen))
		}
		// Only a sender into a queue the segment was posted to as a
		// receive buffer reaches it this way: the import of that queue
		// checked its token.
		if !seg.receiveOfAny(cc.rqs) {
			return fail(provider.Errorf(provider.ErrPermission, "segment %d is not a receive buffer of a queue this peer imported", h))
		}
		// A SEND writes the buffer, whatever the segment grants importers.
		return s.segReply(cc, reply, seg, provider.AccessWrite)
	case wire.ImportJetty:
		var desc provider.JettyDesc
		err := desc.UnmarshalBinary(w.Take(provider.JettyDescSize))
		token := w.GetU32()
		if err != nil || w.Short || len(w.Bytes) != 0 {
			return fail(provider.Errorf(provider.ErrInvalid, "malformed import request"))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		ep, err := c.findEndpointLocked(desc, token)
		if err != nil {
			return fail(err)
		}
		reply, fds := s.jettyReply(reply, ep.rq)
		if reply.Status == provider.StatusSuccess {
			cc.rqs[ep.rq.id] = struct{}{}
			cc.jfcs[ep.rq.jfc.id] = struct{}{}
		}
		return reply, fds
	case wire.InvalidateSeg:
		// It comes with a SEND_INVALIDATE into one of this context's
		// queues, which the peer must have imported.
		if len(cc.rqs) == 0 {
			return fail(provider.Errorf(provider.ErrPermission, "invalidate from a peer that imported no queue of this context"))
		}
		if err := c.answerInvalidate(&w); err != nil {
			return fail(err)
		}
		return reply, nil
	case wire.ImportGroup:
		var desc provider.JettyDesc
		err := desc.UnmarshalBinary(w.Take(provider.JettyDescSize))
		token := w.GetU32()
		if err != nil || w.Short || len(w.Bytes) != 0 || desc.Kind != provider.KindJettyGroup {
			return fail(provider.Errorf(provider.ErrInvalid, "malformed group import request"))
		}
		policy, ids, err := c.groups.Lookup(desc.ID.ID, desc.TokenPolicy, token)
		if err != nil {
			return fail(err)
		}
		b := (&wire.Buf{}).U32(uint32(policy)).U32(uint32(len(ids)))
		for _, id := range ids {
			b.U32(id)
		}
		reply.Payload = b.Bytes
		return reply, nil
	case wire.List:
		b, err := json.Marshal(c.info(len(req.Payload) == 1 && req.Payload[0] == wire.ListStats))
		if err != nil {
			return fail(err)
		}
		reply.Payload = b
		return reply, nil
	case wire.Ping:
		// The echo is as long as the request, which RequestLimit bounds.
		reply.Payload = req.Payload
		return reply, nil
	case wire.ResolvePort:
		b, err := c.answerResolvePort(&w)
		if err != nil {
			return fail(err)
		}
		reply.Payload = b
		return reply, nil
	}
	return fail(provider.Errorf(provider.ErrNotSupported, "control request type %d", req.Type))
}

// remoteAccess are the rights that let an importer reach a segment.
const remoteAccess = provider.AccessRead | provider.AccessWrite | provider.AccessAtomic

// refuse logs a refused request and slows the connection that made it: a
// peer guessing tokens gets a few answers at once, then one per
// connFailEvery on its connection, and all connections together one per
// contextFailEvery. It runs on the connection's own goroutine, so only
// that connection waits.
func (s *ctlServer) refuse(cc *ctlConn, err error) {
	n := s.refusals.Add(1)
	if s.refused.allow() {
		provider.Logf(provider.LogWarning, "loopback: %s refused a request of pid %d (%d refused in all): %v", s.path, cc.pid, n, err)
	}
	wait := max(cc.fails.take(), s.fails.take())
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-s.closing:
		}
	}
}

// segReply hands out seg's memory: a memfd that is writable only when
// rights include WRITE or ATOMIC, or, for caller memory, where it is.
func (s *ctlServer) segReply(cc *ctlConn, reply wire.Message, seg *segment, rights provider.Access) (wire.Message, []int) {
	r := wire.SegReply{Handle: seg.handle, Gen: seg.ref.gen, PID: uint32(os.Getpid()), VA: seg.desc.VA,
		Len: seg.desc.Len, Access: seg.desc.Access}
	if seg.m == nil {
		r.Caller = true
		cc.grantCaller(seg.handle, seg.ref.gen)
	} else {
		fd, err := shareFD(seg.m.FD(), rights&(provider.AccessWrite|provider.AccessAtomic) != 0)
		if err != nil {
			reply.Status, reply.Payload = provider.StatusOf(err), []byte(err.Error())
			return reply, nil
		}
		r.Size = uint64(len(seg.m.Bytes()))
		reply.FDs = []int{fd}
	}
	reply.Payload = r.Encode()
	return reply, reply.FDs
}

func (s *ctlServer) jettyReply(reply wire.Message, rq *recvq) (wire.Message, []int) {
	r := wire.JettyReply{ID: rq.id, MaxSGE: uint32(rq.maxSGE), Depth: uint32(rq.ring.Cap()), SlotSize: rq.ring.SlotSize(),
		CRFlags: uint32(rq.crFlags), JFCID: rq.jfc.id, JFCDepth: uint32(rq.jfc.view.ring.Cap()),
		JFCSlotSize: rq.jfc.view.ring.SlotSize()}
	fds := make([]int, 0, 4)
	for _, fd := range []int{rq.ring.Mapping().FD(), rq.jfc.view.ring.Mapping().FD(), rq.jfc.view.efd, rq.inbox.box.Ring().Mapping().FD()} {
		if fd < 0 {
			continue
		}
		d, err := dupFD(fd)
		if err != nil {
			for _, x := range fds {
				unix.Close(x)
			}
			reply.Status, reply.Payload = provider.StatusOf(err), []byte(err.Error())
			return reply, nil
		}
		fds = append(fds, d)
	}
	if rq.jfc.view.efd >= 0 {
		r.HasEventfd = 1
	}
	r.InboxCells = uint32(rq.inbox.box.Ring().Cap())
	reply.Payload = r.Encode()
	reply.FDs = fds
	return reply, fds
}

// notify handles a peer's report that it dropped a record of one of our
// JFCs: the owner raises the JFC_ERR event, as for a local overflow. Only
// a peer that imported a queue completing into that JFC may report, and a
// JFC_ERR the application has not taken yet is not raised again: a peer
// that repeats itself costs nothing.
func (s *ctlServer) notify(cc *ctlConn, payload []byte) {
	w := wire.Buf{Bytes: payload}
	id := w.GetU32()
	if w.Short {
		return
	}
	if _, ok := cc.jfcs[id]; !ok {
		if s.refused.allow() {
			provider.Logf(provider.LogWarning, "loopback: %s ignored pid %d's report on jfc %d, which it did not import", s.path, cc.pid, id)
		}
		return
	}
	s.c.mu.Lock()
	var j *jfc
	for ch := range s.c.children.All() {
		if x, ok := ch.(*jfc); ok && x.id == id {
			j = x
			break
		}
	}
	s.c.mu.Unlock()
	if j != nil && !j.closed.Load() {
		j.ctx.events.RaiseOnce(provider.EventJFCErr, &j.src, 0)
	}
}
