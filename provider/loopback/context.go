package loopback

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/internal/live"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/jgroup"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/internal/rules"
)

// child is any object a context closes when it closes; rank orders the
// teardown (see objtab).
type child interface {
	destroy()
	rank() int
}

type lbContext struct {
	eid    provider.EID
	uasid  uint32
	dir    string
	uid    int // the user whose processes it serves and imports from (ownUID)
	closed atomic.Bool
	// closeMu is held (read) by an object's Close while it tears the
	// object down, and (write) by the context's Close while it tears down
	// the objects left: a queue closing in one goroutine still writes
	// records into its JFC, which the context's Close in another must not
	// unmap meanwhile.
	closeMu sync.RWMutex

	mu       sync.Mutex
	children objtab.Table[child]
	nextTok  uint32
	tokens   map[uint32]*tokenInfo
	nextID   uint32
	// recvqs maps JFR and Jetty ids to their receive queues, for imports.
	recvqs map[uint32]*endpoint
	// sendqs is indexed by queue id: a JFC credits queue slots through it
	// when it polls, without a lock (copy on write).
	sendqs atomic.Pointer[[]*sendq]
	// segs is indexed by segment handle; receive requests in shared rings
	// name their buffers by handle (copy on write).
	segs atomic.Pointer[[]*segment]
	hnd  handles
	// page holds the segments' shared entries; peers map it.
	page *ctlPage
	// pages are the pages of contexts of this process that c imported
	// segments from; c holds a reference on each until it closes.
	pages map[*ctlPage]struct{}
	srv   *ctlServer

	peersMu sync.Mutex
	peers   map[fabricKey]*peerConn

	events asyncq.Queue

	// retired sums the counters of the context's closed queues and JFCs
	// (see stats.go).
	statsMu sync.Mutex
	retired provider.QueueStats
	// groups are the context's jetty groups.
	groups jgroup.Table

	// ports are the Jettys published under a port (ports.go).
	ports portTable
}

type tokenInfo struct {
	explicit bool
	segs     []*segment
}

// newContext creates a context with a random UASID, unique on the host: it
// must be free both in this process and in the runtime directory.
func newContext(eid provider.EID) (*lbContext, error) {
	dir := RuntimeDir()
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	page, err := newCtlPage()
	if err != nil {
		return nil, err
	}
	c := &lbContext{eid: eid, dir: dir, uid: ownUID(), page: page, tokens: map[uint32]*tokenInfo{},
		recvqs: map[uint32]*endpoint{}, peers: map[fabricKey]*peerConn{}, pages: map[*ctlPage]struct{}{}}
	c.events.Init("loopback")
	for tries := 0; ; tries++ {
		c.uasid = rand.Uint32()
		if c.uasid == 0 || !fabricAdd(c) {
			continue
		}
		err = c.listen()
		if err == nil {
			live.Contexts(1)
			return c, nil
		}
		fabricRemove(c)
		if !errors.Is(err, provider.ErrExist) || tries > 8 {
			page.release()
			return nil, err
		}
	}
}

func (c *lbContext) EID() provider.EID { return c.eid }
func (c *lbContext) UASID() uint32     { return c.uasid }

func (c *lbContext) jettyID(id uint32) provider.JettyID {
	return provider.JettyID{EID: c.eid, UASID: c.uasid, ID: id}
}

func errClosed(what string) error { return rules.Closed(what) }

func (c *lbContext) check() error {
	if c.closed.Load() {
		return errClosed("context")
	}
	return nil
}

// adopt records a new child and gives it an id; the context closes children
// in reverse order of adoption.
func (c *lbContext) adopt(ch child) (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return 0, errClosed("context")
	}
	c.children.Add(ch, ch.rank())
	live.Objects(1)
	c.nextID++
	return c.nextID, nil
}

func (c *lbContext) disown(ch child) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.children.Remove(ch) {
		live.Objects(-1)
	}
}

// Close tears the context down: the control socket first (importers are
// told goodbye, so their requests fail as to closed objects), then its
// objects, then the links to the contexts it imported from.
func (c *lbContext) Close() error {
	c.mu.Lock()
	if c.closed.Swap(true) {
		c.mu.Unlock()
		return nil
	}
	kids := c.children.Drain()
	live.Objects(-len(kids))
	pages := c.pages
	c.pages = nil
	c.mu.Unlock()
	fabricRemove(c)
	// Importers are told goodbye first, and no control request runs while
	// the objects go away.
	c.srv.stop()
	c.closeMu.Lock()
	for _, k := range kids { // queues, then JFCs and JFCEs, then memory
		k.destroy()
	}
	c.closeMu.Unlock()
	c.peersMu.Lock()
	peers := c.peers
	c.peers = map[fabricKey]*peerConn{}
	c.peersMu.Unlock()
	for _, p := range peers {
		p.close()
	}
	c.srv.release()
	for pg := range pages {
		pg.release()
	}
	c.page.release()
	c.events.Close()
	sweep(c.dir)
	live.Contexts(-1)
	return nil
}

// peerLost is called when the link to p is gone: requests waiting on it
// retry now and fail, and RC jetties bound to it go to ERROR with an event,
// as an RC connection whose remote end vanished does.
func (c *lbContext) peerLost(p *peerConn) {
	tab := c.sendqs.Load()
	if tab == nil {
		return
	}
	for _, q := range *tab {
		if q == nil {
			continue
		}
		// Requests left in the peer's inbox fail first, as a request
		// waiting for a receive there does (kick): the oldest with a
		// record, before remoteLost moves an RC jetty to ERROR without
		// one.
		q.mu.Lock()
		q.inboxLost(p)
		q.mu.Unlock()
		q.kick()
		q.remoteLost(p)
	}
}

func (c *lbContext) AllocTokenID() (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return 0, errClosed("context")
	}
	c.nextTok++
	c.tokens[c.nextTok] = &tokenInfo{explicit: true}
	return c.nextTok, nil
}

func (c *lbContext) FreeTokenID(id uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return errClosed("context")
	}
	t := c.tokens[id]
	if t == nil || !t.explicit {
		return provider.Errorf(provider.ErrNotFound, "token id %d", id)
	}
	if len(t.segs) > 0 {
		return provider.Errorf(provider.ErrBusy, "token id %d is used by %d segments", id, len(t.segs))
	}
	delete(c.tokens, id)
	return nil
}

func (c *lbContext) AsyncEvent(ctx context.Context) (provider.AsyncEvent, error) {
	if err := c.check(); err != nil {
		return provider.AsyncEvent{}, err
	}
	return c.events.Get(ctx, errClosed("context"))
}

func (c *lbContext) AckAsyncEvent(ev provider.AsyncEvent) error { return c.events.Ack(ev) }

// registerSendq and unregisterSendq maintain the lock-free id table and
// the process's list of queues (see quiesce.go).
func (c *lbContext) registerSendq(q *sendq) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old []*sendq
	if p := c.sendqs.Load(); p != nil {
		old = *p
	}
	n := max(len(old), int(q.id)+1)
	tab := make([]*sendq, n)
	copy(tab, old)
	tab[q.id] = q
	c.sendqs.Store(&tab)
	trackSendq(q)
	q.jfc.inboxSQs.add(q)
}

func (c *lbContext) unregisterSendq(q *sendq) {
	q.jfc.inboxSQs.remove(q)
	untrackSendq(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.sendqs.Load()
	if p == nil || int(q.id) >= len(*p) {
		return
	}
	tab := append([]*sendq(nil), *p...)
	tab[q.id] = nil
	c.sendqs.Store(&tab)
}

func (c *lbContext) sendqByID(id uint32) *sendq {
	p := c.sendqs.Load()
	if p == nil || int(id) >= len(*p) {
		return nil
	}
	return (*p)[id]
}
