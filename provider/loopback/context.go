package loopback

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// child is any object a context closes when it closes.
type child interface {
	destroy()
}

type lbContext struct {
	eid    provider.EID
	uasid  uint32
	closed atomic.Bool

	mu       sync.Mutex
	children []child
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

	events eventQueue
}

type tokenInfo struct {
	explicit bool
	segs     []*segment
}

func newContext(eid provider.EID) *lbContext {
	c := &lbContext{eid: eid, uasid: fabric.uasid.Add(1), tokens: map[uint32]*tokenInfo{},
		recvqs: map[uint32]*endpoint{}}
	c.events.init()
	fabricAdd(c)
	return c
}

func (c *lbContext) EID() provider.EID { return c.eid }
func (c *lbContext) UASID() uint32     { return c.uasid }

func (c *lbContext) jettyID(id uint32) provider.JettyID {
	return provider.JettyID{EID: c.eid, UASID: c.uasid, ID: id}
}

func errClosed(what string) error { return provider.Errorf(provider.ErrClosed, "%s is closed", what) }

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
	c.children = append(c.children, ch)
	c.nextID++
	return c.nextID, nil
}

func (c *lbContext) disown(ch child) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.children {
		if x == ch {
			c.children = append(c.children[:i], c.children[i+1:]...)
			return
		}
	}
}

func (c *lbContext) Close() error {
	c.mu.Lock()
	if c.closed.Swap(true) {
		c.mu.Unlock()
		return nil
	}
	kids := c.children
	c.children = nil
	c.mu.Unlock()
	fabricRemove(c)
	for i := len(kids) - 1; i >= 0; i-- {
		kids[i].destroy()
	}
	c.events.close()
	return nil
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
	ev, err := c.events.get(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return ev, provider.Errorf(provider.ErrTimeout, "no async event before the deadline")
	}
	return ev, err
}

func (c *lbContext) AckAsyncEvent(ev provider.AsyncEvent) error { return c.events.ack(ev) }

// registerSendq and unregisterSendq maintain the lock-free id table.
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
}

func (c *lbContext) unregisterSendq(q *sendq) {
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
