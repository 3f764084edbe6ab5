package loopback

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/rules"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// peerConn is this context's link to a context of another process: the
// control connection, and every mapping of the peer's memory and queues
// that imports through it made. Mappings live until the link goes away
// (either context closes, or the peer's process dies), so a request never
// touches memory that is being unmapped: requests check that the peer is
// usable under their queue's lock, and the teardown waits for those locks
// (see quiesce.go).
type peerConn struct {
	c    *lbContext
	key  fabricKey
	path string
	pid  int
	conn *net.UnixConn
	page *ctlPage // the owner's segment entries, read-only
	// counts is where this process counts its accesses to the owner's
	// caller memory: a page the owner made for this link alone.
	counts *countPage

	// rpcTurn is held by the request in flight: one at a time, in
	// order. A channel rather than a mutex, so that a request can stop
	// waiting for its turn when its context ends.
	rpcTurn chan struct{}
	replies chan wire.Message
	done    chan struct{} // closed when the link is lost
	torn    chan struct{} // closed when the teardown finished

	dead     atomic.Bool
	graceful atomic.Bool // the peer said goodbye: its objects are closed, not lost

	mu   sync.Mutex
	segs map[uint32]*peerSeg
	// segIndex is segs by handle, rebuilt on each insert, so that a
	// delivery finds a receive buffer's segment without the lock.
	segIndex atomic.Pointer[[]*peerSeg]
	rqs      map[uint32]*rqView
	jfcs     map[uint32]*jfcView
	maps     []*shm.Mapping
	efds     []int
}

type peerSeg struct {
	ref      memRef
	writable bool // its mapping may be written (a read-only grant's is not)
}

// rpcTimeout bounds a control request, so that a stopped peer cannot hang
// an import forever.
const rpcTimeout = 5 * time.Second

// peer returns the live link to the context at eid and uasid, dialling it
// through the runtime directory if there is none.
func (c *lbContext) peer(ctx context.Context, eid provider.EID, uasid uint32) (*peerConn, error) {
	k := fabricKey{eid, uasid}
	c.peersMu.Lock()
	p := c.peers[k]
	c.peersMu.Unlock()
	if p != nil && !p.dead.Load() {
		return p, nil
	}
	// Dial without the lock: a teardown takes it, and a dial can wait on one.
	p, err := dialPeer(ctx, c, k)
	if err != nil {
		return nil, err
	}
	c.peersMu.Lock()
	if c.closed.Load() {
		c.peersMu.Unlock()
		p.close()
		return nil, errClosed("context")
	}
	if q := c.peers[k]; q != nil && !q.dead.Load() {
		c.peersMu.Unlock()
		p.close()
		return q, nil
	}
	c.peers[k] = p
	c.peersMu.Unlock()
	return p, nil
}

func dialPeer(ctx context.Context, c *lbContext, k fabricKey) (*peerConn, error) {
	path := filepath.Join(c.dir, sockName(k.eid, k.uasid))
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, dialErr(err, path, k)
	}
	// The listener must be this user's: another user's process in the
	// socket's place would see our tokens and could name any pid in its
	// replies.
	cred, err := checkPeerUID(conn, c.uid, "the context at "+path)
	if err != nil {
		conn.Close()
		return nil, err
	}
	p := &peerConn{c: c, key: k, path: path, pid: int(cred.Pid), conn: conn, replies: make(chan wire.Message, 1), rpcTurn: make(chan struct{}, 1),
		done: make(chan struct{}), torn: make(chan struct{}),
		segs: map[uint32]*peerSeg{}, rqs: map[uint32]*rqView{}, jfcs: map[uint32]*jfcView{}}
	go p.read()
	m, err := p.rpc(ctx, wire.Hello, (&wire.Buf{}).U32(uint32(os.Getpid())).Bytes, 2)
	if err != nil {
		p.close()
		if errors.Is(err, provider.ErrClosed) {
			// Its process was exiting: the connection got in before the
			// listener was gone.
			removeIfStale(path)
			return nil, provider.Errorf(provider.ErrNotFound, "context at eid %v uasid %d is gone", k.eid, k.uasid)
		}
		return nil, err
	}
	w := wire.Buf{Bytes: m.Payload}
	pid := int(w.GetU32())
	if w.Short || len(m.FDs) != 2 || pid != p.pid {
		m.CloseFDs()
		p.close()
		return nil, provider.Errorf(provider.ErrFail, "peer at %s sent a bad greeting (pid %d from process %d, %d fds)", path, pid, p.pid, len(m.FDs))
	}
	counts, err := attachCountPage(m.FDs[1])
	if err != nil {
		unix.Close(m.FDs[0])
		p.close()
		return nil, provider.Errorf(provider.StatusOf(err), "peer at %s sent a bad count page: %v", path, err)
	}
	page, err := attachCtlPage(m.FDs[0])
	if err != nil {
		counts.m.Close()
		p.close()
		return nil, provider.Errorf(provider.StatusOf(err), "peer at %s sent a bad context page: %v", path, err)
	}
	// The link may already be down (the peer died right after its
	// greeting): lost has run, or will run, its teardown under p.mu, and
	// the pages must be in it or not mapped at all.
	p.mu.Lock()
	if p.dead.Load() {
		p.mu.Unlock()
		page.m.Close()
		counts.m.Close()
		p.close()
		return nil, provider.Errorf(provider.ErrNotFound, "context at eid %v uasid %d is gone", k.eid, k.uasid)
	}
	p.page, p.counts = page, counts
	p.mu.Unlock()
	return p, nil
}

// dialErr says why the context at path could not be reached.
func dialErr(err error, path string, k fabricKey) error {
	switch {
	case errors.Is(err, unix.ECONNREFUSED):
		removeIfStale(path)
		return provider.Errorf(provider.ErrNotFound, "no context at eid %v uasid %d (its socket %s has no listener)", k.eid, k.uasid, path)
	case errors.Is(err, unix.ENOENT):
		return provider.Errorf(provider.ErrNotFound, "no context at eid %v uasid %d (in this process or in %s)", k.eid, k.uasid, filepath.Dir(path))
	case errors.Is(err, unix.EAGAIN):
		return provider.Errorf(provider.ErrBusy, "the context at eid %v uasid %d takes no more connections now (its listen backlog is full); try again", k.eid, k.uasid)
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return provider.Errorf(provider.ErrPermission, "cannot connect to %s: this user may not use the socket or its directory", path)
	case errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE):
		return rules.Resource("connect to "+path, err)
	}
	return provider.Errorf(provider.ErrFail, "connect to %s: %v", path, err)
}

// read delivers replies until the connection ends, then tears the link down.
func (p *peerConn) read() {
	for {
		m, err := wire.Read(p.conn, wire.ReplyLimit, 0)
		if err != nil {
			break
		}
		if m.Type == wire.Bye {
			m.CloseFDs()
			p.graceful.Store(true)
			continue
		}
		select {
		case p.replies <- m:
		default:
			// A message nobody asked for: the peer does not follow the
			// protocol, so the link is dropped.
			m.CloseFDs()
			p.conn.Close()
		}
	}
	p.lost()
}

// rpc sends a request and waits for its reply, which must carry nfds
// descriptors (the reply's fds are the caller's to close or keep).
func (p *peerConn) rpc(ctx context.Context, t wire.Type, payload []byte, nfds int) (wire.Message, error) {
	if err := provider.ContextErr(ctx); err != nil {
		return wire.Message{}, err
	}
	select {
	case p.rpcTurn <- struct{}{}:
	case <-ctx.Done():
		return wire.Message{}, provider.ContextErr(ctx)
	case <-p.done:
		return wire.Message{}, p.lostErr()
	}
	if p.dead.Load() {
		<-p.rpcTurn
		return wire.Message{}, p.lostErr()
	}
	if err := wire.Write(p.conn, wire.Message{Type: t, Payload: payload}); err != nil {
		<-p.rpcTurn
		return wire.Message{}, p.lostErr()
	}
	timer := time.NewTimer(rpcTimeout)
	select {
	case m := <-p.replies:
		timer.Stop()
		<-p.rpcTurn
		if err := m.Err(); err != nil {
			m.CloseFDs()
			return m, err
		}
		if m.Type != t || len(m.FDs) < nfds {
			m.CloseFDs()
			return m, provider.Errorf(provider.ErrFail, "peer %d answered request %d with %d (%d fds)", p.pid, t, m.Type, len(m.FDs))
		}
		return m, nil
	case <-p.done:
		timer.Stop()
		<-p.rpcTurn
		return wire.Message{}, p.lostErr()
	case <-timer.C:
		// The reply may still come; a late one would answer the next
		// request, so the link cannot be trusted any more.
		p.conn.Close()
		<-p.rpcTurn
		return wire.Message{}, provider.Errorf(provider.ErrTimeout, "peer process %d did not answer within %v", p.pid, rpcTimeout)
	case <-ctx.Done():
		// The reply is still owed and would answer the next request: a
		// goroutine keeps the link until it comes, and drops it. An owner
		// keeps nothing of a request it answered (the fds it sends are
		// the importer's to close), so nothing needs undoing.
		go func() {
			defer func() { <-p.rpcTurn }()
			defer timer.Stop()
			select {
			case m := <-p.replies:
				m.CloseFDs()
			case <-p.done:
			case <-timer.C:
				p.conn.Close()
			}
		}()
		return wire.Message{}, provider.ContextErr(ctx)
	}
}

func (p *peerConn) lostErr() error {
	if p.graceful.Load() {
		return errClosed("peer context")
	}
	return provider.Errorf(provider.ErrClosed, "peer process %d is gone", p.pid)
}

// notifyOverflow tells the peer we dropped a record of its JFC id. It is
// called from the data path, so it does not wait for the answer.
func (p *peerConn) notifyOverflow(id uint32) {
	go func() {
		select {
		case p.rpcTurn <- struct{}{}:
		case <-p.done:
			return
		}
		defer func() { <-p.rpcTurn }()
		_ = wire.Write(p.conn, wire.Message{Type: wire.Notify, Payload: (&wire.Buf{}).U32(id).Bytes})
	}()
}

// usable reports whether the peer's mappings may still be used: CRSuccess,
// or the status of its loss.
//
// Every access to them is made by a request of this context under its
// queue's lock (a post, an RNR retry), and checks usable first. lost sets
// dead and then takes each queue's lock once before it unmaps anything, so
// an access that found the peer usable has ended by then, and a later one
// finds it dead. An access therefore needs no count of its own: a count
// is two locked instructions per access, and each waits until the
// request's earlier stores have reached the peer's core.
func (p *peerConn) usable() provider.CRStatus {
	if p.dead.Load() {
		return p.lossStatus()
	}
	return provider.CRSuccess
}

// lossStatus is what requests to a lost peer complete with: the status of a
// closed target if it said goodbye, a transport timeout if its process died.
func (p *peerConn) lossStatus() provider.CRStatus {
	switch {
	case !p.dead.Load():
		return provider.CRSuccess
	case p.graceful.Load():
		return provider.CRRemAccessAbortErr
	}
	return provider.CRAckTimeoutErr
}

func (p *peerConn) close() {
	p.conn.Close()
	<-p.torn
}

// lost runs once, when the connection ends for any reason.
func (p *peerConn) lost() {
	p.dead.Store(true)
	close(p.done)
	c := p.c
	c.peersMu.Lock()
	if c.peers[p.key] == p {
		delete(c.peers, p.key)
	}
	c.peersMu.Unlock()
	// Requests waiting for a receive at the peer fail now, not at their
	// next RNR retry; bound RC jetties learn that their remote is gone.
	c.peerLost(p)
	c.quiesceSendqs()
	p.mu.Lock()
	for _, m := range p.maps {
		m.Close()
	}
	for _, fd := range p.efds {
		unix.Close(fd)
	}
	p.maps, p.efds = nil, nil
	p.segs, p.rqs, p.jfcs = nil, nil, nil
	p.segIndex.Store(nil)
	if p.page != nil {
		p.page.m.Close()
		p.counts.m.Close()
	}
	p.mu.Unlock()
	if !p.graceful.Load() && !c.closed.Load() {
		// The peer's process died: remove the socket it left behind.
		removeIfStale(p.path)
	}
	close(p.torn)
}

// importSegment imports a segment of the peer and maps its memory.
func (p *peerConn) importSegment(ctx context.Context, desc provider.SegmentDesc, token uint32) (memRef, error) {
	b, _ := desc.MarshalBinary()
	m, err := p.rpc(ctx, wire.ImportSeg, (&wire.Buf{Bytes: b}).U32(token).Bytes, 0)
	if err != nil {
		return memRef{}, err
	}
	ps, err := p.addSeg(m, false)
	if err != nil {
		return memRef{}, err
	}
	if ps.ref.va != desc.VA || ps.ref.len != desc.Len || ps.ref.access != desc.Access {
		return memRef{}, provider.Errorf(provider.ErrFail, "peer %d described segment %v differently", p.pid, desc)
	}
	return ps.ref, nil
}

// bufRef resolves a receive buffer of the peer, asking the peer for its
// memory the first time. A SEND writes it, so a mapping made for a
// read-only import of the same segment does not do.
func (p *peerConn) bufRef(h, gen uint32) *memRef {
	if idx := p.segIndex.Load(); idx != nil && int(h) < len(*idx) {
		if ps := (*idx)[h]; ps != nil && ps.ref.gen == gen && ps.writable {
			return &ps.ref
		}
	}
	p.mu.Lock()
	ps := p.segs[h]
	p.mu.Unlock()
	if ps != nil && ps.ref.gen == gen && ps.writable {
		return &ps.ref
	}
	m, err := p.rpc(context.Background(), wire.SegFD, (&wire.Buf{}).U32(h).U32(gen).Bytes, 0)
	if err != nil {
		return nil
	}
	ps, err = p.addSeg(m, true)
	if err != nil || ps.ref.gen != gen {
		return nil
	}
	return &ps.ref
}

// addSeg maps the memory a segment reply describes, or reuses the mapping
// of an earlier reply for the same segment. write says the mapping must
// be writable; a read-only memfd is mapped read-only.
func (p *peerConn) addSeg(m wire.Message, write bool) (*peerSeg, error) {
	r, ok := wire.DecodeSegReply(m.Payload)
	wantFDs := 1
	if r.Caller {
		wantFDs = 0
	}
	// Caller memory is reached through the owner's pid, which only the
	// kernel's word for it (SO_PEERCRED) may name: a reply naming another
	// process would turn this process's writes on that one.
	if !ok || r.Handle >= maxSegments || len(m.FDs) != wantFDs || (r.Caller && int(r.PID) != p.pid) || (!r.Caller && r.Size < r.Len) {
		m.CloseFDs()
		return nil, provider.Errorf(provider.ErrFail, "peer %d sent a malformed segment reply", p.pid)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.segs == nil {
		m.CloseFDs()
		return nil, p.lostErr()
	}
	if ps := p.segs[r.Handle]; ps != nil && ps.ref.gen == r.Gen && (ps.writable || !write) {
		m.CloseFDs()
		return ps, nil
	}
	ps := &peerSeg{ref: memRef{ent: p.page.entry(r.Handle), inflight: p.counts.count(r.Handle), gen: r.Gen, va: r.VA, len: r.Len, access: r.Access,
		pid: int(r.PID), peer: p}}
	if r.Caller {
		// Caller memory cannot be mapped: reach it in the owner's address
		// space, holding the owner's access count while we do.
		ps.ref.counted = true
		ps.writable = true
	} else {
		mp, writable, err := shm.AttachMemory(m.FDs[0], r.Size)
		if err != nil {
			return nil, err
		}
		p.maps = append(p.maps, mp)
		if write && !writable {
			return nil, provider.Errorf(provider.ErrFail, "peer %d sent a read-only receive buffer", p.pid)
		}
		ps.ref.mem = mp.Bytes()[:r.Len]
		ps.writable = writable
	}
	// An older generation's mapping, or a read-only one, stays in p.maps
	// until teardown: a request may still be copying through it.
	p.segs[r.Handle] = ps
	p.indexSeg(r.Handle, ps)
	return ps, nil
}

// importJetty maps the receive ring and JFC of a peer's JFR or Jetty.
func (p *peerConn) importJetty(ctx context.Context, desc provider.JettyDesc, token uint32) (*rqView, error) {
	b, _ := desc.MarshalBinary()
	m, err := p.rpc(ctx, wire.ImportJetty, (&wire.Buf{Bytes: b}).U32(token).Bytes, 2)
	if err != nil {
		return nil, err
	}
	r, ok := wire.DecodeJettyReply(m.Payload)
	hasInbox := 0
	if r.InboxCells > 0 {
		hasInbox = 1
	}
	want := 2 + int(r.HasEventfd) + hasInbox
	if !ok || len(m.FDs) != want || r.InboxCells > 1<<14 || r.MaxSGE == 0 || r.MaxSGE > maxSGE || r.Depth == 0 || r.Depth > maxDepth ||
		r.JFCDepth == 0 || r.JFCDepth > maxDepth || r.SlotSize != shm.SlotSizeFor(recvSlotSize(int(r.MaxSGE))) ||
		r.JFCSlotSize != shm.SlotSizeFor(crSlotSize) {
		m.CloseFDs()
		return nil, provider.Errorf(provider.ErrFail, "peer %d sent a malformed jetty reply", p.pid)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rqs == nil {
		m.CloseFDs()
		return nil, p.lostErr()
	}
	if v := p.rqs[r.ID]; v != nil {
		m.CloseFDs()
		return v, nil
	}
	jv := p.jfcs[r.JFCID]
	if jv == nil {
		ring, err := shm.AttachRing(m.FDs[1], int(r.JFCDepth), r.JFCSlotSize, 0)
		m.FDs[1] = -1
		if err != nil {
			m.CloseFDs()
			return nil, err
		}
		p.maps = append(p.maps, ring.Mapping())
		jv = &jfcView{ring: ring, efd: -1, peer: p, id: r.JFCID}
		if r.HasEventfd == 1 {
			jv.efd = m.FDs[2]
			p.efds = append(p.efds, jv.efd)
			m.FDs[2] = -1
		}
		p.jfcs[r.JFCID] = jv
	}
	var ib *rqInbox
	if hasInbox == 1 {
		last := len(m.FDs) - 1
		var err error
		ib, err = attachRQInbox(m.FDs[last], int(r.InboxCells))
		m.FDs[last] = -1
		if err != nil {
			m.CloseFDs()
			return nil, err
		}
		p.maps = append(p.maps, ib.box.Ring().Mapping())
	}
	ring, err := shm.AttachRing(m.FDs[0], int(r.Depth), r.SlotSize, 0)
	m.FDs[0] = -1
	for _, fd := range m.FDs {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	if err != nil {
		return nil, err
	}
	p.maps = append(p.maps, ring.Mapping())
	v := &rqView{id: r.ID, maxSGE: int(r.MaxSGE), ring: ring, jfc: jv, crFlags: provider.CRFlags(r.CRFlags), peer: p, inbox: ib,
		rxLimit: ring.Meta(metaRxLimit)}
	p.rqs[r.ID] = v
	return v, nil
}

// indexSeg puts ps at handle h of a copy of segIndex; p.mu is held.
func (p *peerConn) indexSeg(h uint32, ps *peerSeg) {
	var idx []*peerSeg
	if old := p.segIndex.Load(); old != nil {
		idx = *old
	}
	idx = append(make([]*peerSeg, 0, max(len(idx), int(h)+1)), idx...)
	idx = idx[:max(len(idx), int(h)+1)]
	idx[h] = ps
	p.segIndex.Store(&idx)
}
