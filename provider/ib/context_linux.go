//go:build cgo && urma_verbs

package ib

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/internal/live"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/jgroup"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/internal/rules"
)

// ibContext is a device opened on one EID: a protection domain, and an
// rdma_cm listener on the EID's address whose port is the context's UASID.
// Peers reach everything the context exports through that listener.
type ibContext struct {
	// closeMu is held (read) by an object's Close while it tears the
	// object down, and (write) by the context's Close while it tears down
	// the objects left: a QP being destroyed in one goroutine must not see
	// its CQ or PD destroyed by the other.
	closeMu sync.RWMutex

	dev    *device
	eid    eidEntry
	vc     *verbs.Context
	hub    *asyncHub
	cm     *cmServer
	uasid  uint32
	events asyncq.Queue
	// ctl is a CQ for the completions nobody reads: the send side of
	// responder QPs and the receive side of initiator QPs, which post none.
	ctl *verbs.CQ
	// guard is a page registered without remote rights: the local
	// buffer of requests that carry no data.
	guard    *verbs.MR
	guardMem []byte

	mu      sync.Mutex
	closed  atomic.Bool
	tokens  map[uint32]*tokenInfo
	nextTok uint32
	segs    map[segKey]*segment
	nextID  uint32
	// queues holds JFS, JFR and Jetty objects by id, for the connection
	// requests that name them and for completions (wr_id carries the id).
	queues  map[uint32]any
	objects objtab.Table[child]
	nextCID uint32

	qmu    sync.RWMutex
	qtable map[uint32]completer

	// retired sums the counters of the closed queues and JFCs, under mu
	// (see stats_linux.go).
	retired provider.QueueStats
	// groups are the context's jetty groups (group_linux.go).
	groups jgroup.Table
	// ports are the urmanet ports the context publishes (ports_linux.go).
	ports portSet
}

// child is an object the context closes with itself. rank orders the
// teardown: queues before JFCs before segments.
type child interface {
	Close() error
	rank() int
	forceClose() error
}

// completer turns the completions of one queue into records.
type completer interface {
	complete(wc *verbs.WC, cr *provider.CR) bool
}

func openContext(d *device, e eidEntry) (*ibContext, error) {
	vc, err := verbs.Open(d.info.Name)
	if err != nil {
		return nil, provider.Errorf(provider.ErrNotFound, "open context %s: %v", d.info.Name, err)
	}
	c := &ibContext{dev: d, eid: e, vc: vc, tokens: map[uint32]*tokenInfo{}, segs: map[segKey]*segment{},
		queues: map[uint32]any{}, qtable: map[uint32]completer{}}
	c.events.Init("ib " + d.info.Name)
	fail := func(err error) (*ibContext, error) {
		c.teardown()
		return nil, err
	}
	if c.ctl, err = vc.NewCQ(64, nil, 0); err != nil {
		return fail(verbsErr("create control CQ", err))
	}
	if c.guardMem, err = unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		return fail(provider.Errorf(provider.ErrNoMemory, "mmap: %v", err))
	}
	if c.guard, err = vc.RegMR(unsafe.Pointer(&c.guardMem[0]), uintptr(len(c.guardMem)), verbs.AccessLocalWrite); err != nil {
		return fail(verbsErr("register guard page", err))
	}
	if c.hub, err = acquireHub(d.info.Name, c); err != nil {
		return fail(verbsErr("read async events", err))
	}
	if c.cm, err = startCMServer(c); err != nil {
		return fail(err)
	}
	c.uasid = uint32(c.cm.port)
	live.Contexts(1)
	return c, nil
}

// teardown releases what openContext acquired, in reverse order.
func (c *ibContext) teardown() {
	if c.cm != nil {
		c.cm.stop()
	}
	if c.hub != nil {
		c.hub.release(c)
	}
	if c.ctl != nil {
		_ = c.ctl.Destroy()
	}
	if c.guard != nil {
		_ = c.guard.Dereg()
	}
	if c.guardMem != nil {
		_ = unix.Munmap(c.guardMem)
	}
	_ = c.vc.Close()
}

func (c *ibContext) EID() provider.EID { return c.eid.eid }
func (c *ibContext) UASID() uint32     { return c.uasid }

func (c *ibContext) String() string { return c.dev.info.Name + "/" + c.eid.addr.String() }

// Close closes every child object, newest first, then the context.
func (c *ibContext) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.cm.stop() // no new connections while children go away
	c.ports.closeAll()
	// Jetties and send queues first, then receive queues, then JFCs and
	// JFCEs, then segments: the order URMA prescribes (objtab.Drain).
	// Their untrack then finds nothing, so they are counted out here.
	c.closeMu.Lock()
	c.mu.Lock()
	objs := c.objects.Drain()
	live.Objects(-len(objs))
	c.mu.Unlock()
	for _, o := range objs {
		_ = o.forceClose()
	}
	c.closeMu.Unlock()
	c.events.Close()
	c.teardown() // stops c.cm again: stop is idempotent, and handlers may still reach it
	live.Contexts(-1)
	return nil
}

func (c *ibContext) track(o child) {
	c.mu.Lock()
	if !c.objects.Contains(o) {
		c.objects.Add(o, o.rank())
		live.Objects(1)
	}
	c.mu.Unlock()
}

func (c *ibContext) untrack(o child) {
	st, counted := countersOf(o)
	c.mu.Lock()
	if c.objects.Remove(o) {
		live.Objects(-1)
		if counted {
			c.retired.Add(&st)
		}
	}
	c.mu.Unlock()
}

// newID numbers a JFS, JFR or Jetty; ids are unique within the context
// and never zero.
func (c *ibContext) newID(q any) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	c.queues[c.nextID] = q
	return c.nextID
}

func (c *ibContext) dropID(id uint32) {
	c.mu.Lock()
	delete(c.queues, id)
	c.mu.Unlock()
}

func (c *ibContext) queue(id uint32) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queues[id]
}

// addCompleter numbers a queue for the wr_ids of its requests.
func (c *ibContext) addCompleter(q completer) uint32 {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	c.nextCID++
	c.qtable[c.nextCID] = q
	return c.nextCID
}

func (c *ibContext) dropCompleter(cid uint32) {
	c.qmu.Lock()
	delete(c.qtable, cid)
	c.qmu.Unlock()
}

func (c *ibContext) completer(id uint32) completer {
	c.qmu.RLock()
	q := c.qtable[id]
	c.qmu.RUnlock()
	return q
}

func (c *ibContext) check() error {
	if c.closed.Load() {
		return errClosed("context")
	}
	return nil
}

func (c *ibContext) AsyncEvent(ctx context.Context) (provider.AsyncEvent, error) {
	if err := c.check(); err != nil {
		return provider.AsyncEvent{}, err
	}
	return c.events.Get(ctx, errClosed("context"))
}

func (c *ibContext) AckAsyncEvent(ev provider.AsyncEvent) error { return c.events.Ack(ev) }

// deviceEvent turns a port or device event of the verbs context into the
// URMA event of this context.
func (c *ibContext) deviceEvent(ev verbs.AsyncEvent) {
	switch ev.Type {
	case verbs.EventPortActive:
		c.events.Raise(provider.EventPortActive, nil, ev.Port)
	case verbs.EventPortErr:
		c.events.Raise(provider.EventPortDown, nil, ev.Port)
	case verbs.EventDeviceFatal:
		c.events.Raise(provider.EventDevFatal, nil, 0)
	}
}

func errClosed(what string) error { return rules.Closed(what) }
