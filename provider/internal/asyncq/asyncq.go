// Package asyncq is the async event queue the providers share: events
// raised by objects wait in a queue until the application takes them, and
// each object counts its taken but unacknowledged events, because URMA
// forbids deleting an object before its events are acked.
package asyncq

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// Source is an object that can raise async events. Owner is what the
// application sees as AsyncEvent.Object.
type Source struct {
	Owner   any
	unacked atomic.Int32
}

// Busy returns ErrBusy while events of the source are unacknowledged.
func (s *Source) Busy() error {
	if n := s.unacked.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "%d async events not acknowledged", n)
	}
	return nil
}

type pending struct {
	ev  provider.AsyncEvent
	src *Source
}

// Queue is one context's async events. Init must be called before use.
type Queue struct {
	// Name prefixes the log line of each event, e.g. "loopback".
	Name    string
	mu      sync.Mutex
	queue   []pending
	given   map[uint64]*Source
	next    uint64
	notify  chan struct{}
	closing chan struct{}
	once    sync.Once
}

// Init prepares the queue.
func (q *Queue) Init(name string) {
	q.Name = name
	q.notify = make(chan struct{}, 1)
	q.closing = make(chan struct{})
	q.given = map[uint64]*Source{}
}

// Raise queues an event of type t from src (nil for port and device
// events, which no object owns). port is set for port events.
func (q *Queue) Raise(t provider.EventType, src *Source, port int) { q.raise(t, src, port, false) }

// RaiseOnce is Raise, unless an event of type t from src is already
// queued and not yet taken: a source that raises the same event again and
// again then holds one place in the queue, not one per raise.
func (q *Queue) RaiseOnce(t provider.EventType, src *Source, port int) { q.raise(t, src, port, true) }

func (q *Queue) raise(t provider.EventType, src *Source, port int, once bool) {
	var owner any
	if src != nil {
		owner = src.Owner
	}
	q.mu.Lock()
	if once {
		for i := range q.queue {
			if p := &q.queue[i]; p.src == src && p.ev.Type == t {
				q.mu.Unlock()
				return
			}
		}
	}
	q.next++
	q.queue = append(q.queue, pending{ev: provider.AsyncEvent{Type: t, Object: owner, Port: port, Handle: q.next}, src: src})
	q.mu.Unlock()
	provider.Logf(provider.LogWarning, "%s: async event %v", q.Name, t)
	q.wake()
}

func (q *Queue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Forget drops the events of an object that is being destroyed.
func (q *Queue) Forget(src *Source) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kept := q.queue[:0]
	for _, p := range q.queue {
		if p.src != src {
			kept = append(kept, p)
		}
	}
	q.queue = kept
	for h, s := range q.given {
		if s == src {
			delete(q.given, h)
		}
	}
}

// Get takes the next event, waiting until ctx is done; closed is the error
// returned once the queue is closed.
func (q *Queue) Get(ctx context.Context, closed error) (provider.AsyncEvent, error) {
	for {
		q.mu.Lock()
		if len(q.queue) > 0 {
			p := q.queue[0]
			q.queue = q.queue[1:]
			q.given[p.ev.Handle] = p.src
			if p.src != nil {
				p.src.unacked.Add(1)
			}
			more := len(q.queue) > 0
			q.mu.Unlock()
			if more {
				q.wake()
			}
			return p.ev, nil
		}
		q.mu.Unlock()
		select {
		case <-q.notify:
		case <-q.closing:
			return provider.AsyncEvent{}, closed
		case <-ctx.Done():
			return provider.AsyncEvent{}, provider.ContextErr(ctx)
		}
	}
}

// Ack acknowledges an event returned by Get.
func (q *Queue) Ack(ev provider.AsyncEvent) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	src, ok := q.given[ev.Handle]
	if !ok {
		return provider.Errorf(provider.ErrInvalid, "event %d was not delivered or is already acked", ev.Handle)
	}
	delete(q.given, ev.Handle)
	if src != nil {
		src.unacked.Add(-1)
	}
	return nil
}

// Close makes every Get return its closed error.
func (q *Queue) Close() { q.once.Do(func() { close(q.closing) }) }
