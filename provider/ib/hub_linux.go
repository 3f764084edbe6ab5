//go:build cgo && urma_verbs

package ib

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// asyncHub reads a device's verbs async events. Every context of the
// process on one device shares librdmacm's verbs context, and so its
// single async event descriptor: one hub per device reads it and hands
// each event to the object it names (a QP by number, a CQ or SRQ by the
// value it was created with) or, for port and device events, to every
// context.
type asyncHub struct {
	name string
	refs int // under hubs.mu
	vc   *verbs.Context
	w    *verbs.Waiter
	done chan struct{}

	mu   sync.RWMutex
	qps  map[uint32]func(verbs.AsyncEvent)
	objs map[uint64]func(verbs.AsyncEvent) // CQs and SRQs by context value
	ctxs map[*ibContext]struct{}
}

var hubs struct {
	mu sync.Mutex
	m  map[string]*asyncHub
}

// objValues numbers CQs and SRQs process-wide; verbs hands the number back
// in completion and async events.
var objValues atomic.Uint64

func nextObjValue() uint64 { return objValues.Add(1) }

func acquireHub(name string, c *ibContext) (*asyncHub, error) {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	if hubs.m == nil {
		hubs.m = map[string]*asyncHub{}
	}
	h := hubs.m[name]
	if h == nil {
		vc, err := verbs.Open(name)
		if err != nil {
			return nil, err
		}
		if err := vc.SetAsyncNonblock(); err != nil {
			_ = vc.Close()
			return nil, err
		}
		w, err := verbs.NewWaiter(vc.AsyncFD(), name+" async events")
		if err != nil {
			_ = vc.Close()
			return nil, err
		}
		h = &asyncHub{name: name, vc: vc, w: w, done: make(chan struct{}),
			qps: map[uint32]func(verbs.AsyncEvent){}, objs: map[uint64]func(verbs.AsyncEvent){},
			ctxs: map[*ibContext]struct{}{}}
		hubs.m[name] = h
		go h.loop()
	}
	h.refs++
	h.mu.Lock()
	h.ctxs[c] = struct{}{}
	h.mu.Unlock()
	return h, nil
}

func (h *asyncHub) release(c *ibContext) {
	h.mu.Lock()
	delete(h.ctxs, c)
	h.mu.Unlock()
	hubs.mu.Lock()
	h.refs--
	last := h.refs == 0
	if last {
		delete(hubs.m, h.name)
	}
	hubs.mu.Unlock()
	if last {
		_ = h.w.Close()
		<-h.done
		_ = h.vc.Close()
	}
}

func (h *asyncHub) loop() {
	defer close(h.done)
	for {
		err := h.w.Wait(time.Time{}, func() bool {
			for {
				ev, ok, err := h.vc.GetAsyncEvent()
				if err != nil || !ok {
					return false
				}
				// Acknowledged only once handled: destroying the QP, CQ
				// or SRQ it names waits until then, so a handler never
				// touches a destroyed object.
				h.dispatch(*ev)
				ev.Ack()
			}
		})
		if err != nil {
			return // closed
		}
	}
}

func (h *asyncHub) dispatch(ev verbs.AsyncEvent) {
	provider.Logf(provider.LogInfo, "ib %s: verbs async event %s element %d port %d", h.name, verbs.EventName(ev.Type), ev.Element, ev.Port)
	h.mu.RLock()
	var fn func(verbs.AsyncEvent)
	var all []*ibContext
	switch ev.Type {
	case verbs.EventQPFatal, verbs.EventQPReqErr, verbs.EventQPAccessErr:
		// Only failures: COMM_EST and LAST_WQE_REACHED say a healthy QP
		// got data early or an SRQ-attached QP drained.
		fn = h.qps[uint32(ev.Element)]
	case verbs.EventCQErr, verbs.EventSRQErr, verbs.EventSRQLimit:
		fn = h.objs[ev.Element]
	case verbs.EventPortActive, verbs.EventPortErr, verbs.EventDeviceFatal:
		for c := range h.ctxs {
			all = append(all, c)
		}
	}
	h.mu.RUnlock()
	if fn != nil {
		fn(ev)
	}
	for _, c := range all {
		c.deviceEvent(ev)
	}
}

func (h *asyncHub) watchQP(num uint32, fn func(verbs.AsyncEvent)) {
	h.mu.Lock()
	h.qps[num] = fn
	h.mu.Unlock()
}

func (h *asyncHub) unwatchQP(num uint32) {
	h.mu.Lock()
	delete(h.qps, num)
	h.mu.Unlock()
}

func (h *asyncHub) watchObj(v uint64, fn func(verbs.AsyncEvent)) {
	h.mu.Lock()
	h.objs[v] = fn
	h.mu.Unlock()
}

func (h *asyncHub) unwatchObj(v uint64) {
	h.mu.Lock()
	delete(h.objs, v)
	h.mu.Unlock()
}
