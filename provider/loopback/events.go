package loopback

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// eventSource is an object that can raise async events; it counts the
// events handed to the application and not yet acknowledged, because URMA
// forbids deleting an object before its events are acked.
type eventSource struct {
	unacked atomic.Int32
	owner   any
}

func (s *eventSource) busy() error {
	if n := s.unacked.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "%d async events not acknowledged", n)
	}
	return nil
}

type pendingEvent struct {
	ev  provider.AsyncEvent
	src *eventSource
}

type eventQueue struct {
	mu      sync.Mutex
	queue   []pendingEvent
	given   map[uint64]*eventSource
	next    uint64
	notify  chan struct{}
	closing chan struct{}
	once    sync.Once
}

func (q *eventQueue) init() {
	q.notify = make(chan struct{}, 1)
	q.closing = make(chan struct{})
	q.given = map[uint64]*eventSource{}
}

func (q *eventQueue) raise(t provider.EventType, src *eventSource) {
	q.mu.Lock()
	q.next++
	q.queue = append(q.queue, pendingEvent{ev: provider.AsyncEvent{Type: t, Object: src.owner, Handle: q.next}, src: src})
	q.mu.Unlock()
	provider.Logf(provider.LogWarning, "loopback: async event %v", t)
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// forget drops events of an object that is being destroyed.
func (q *eventQueue) forget(src *eventSource) {
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

func (q *eventQueue) get(ctx context.Context) (provider.AsyncEvent, error) {
	for {
		q.mu.Lock()
		if len(q.queue) > 0 {
			p := q.queue[0]
			q.queue = q.queue[1:]
			q.given[p.ev.Handle] = p.src
			p.src.unacked.Add(1)
			more := len(q.queue) > 0
			q.mu.Unlock()
			if more {
				select {
				case q.notify <- struct{}{}:
				default:
				}
			}
			return p.ev, nil
		}
		q.mu.Unlock()
		select {
		case <-q.notify:
		case <-q.closing:
			return provider.AsyncEvent{}, errClosed("context")
		case <-ctx.Done():
			return provider.AsyncEvent{}, ctx.Err()
		}
	}
}

func (q *eventQueue) ack(ev provider.AsyncEvent) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	src := q.given[ev.Handle]
	if src == nil {
		return provider.Errorf(provider.ErrInvalid, "event %d was not delivered or is already acked", ev.Handle)
	}
	delete(q.given, ev.Handle)
	src.unacked.Add(-1)
	return nil
}

func (q *eventQueue) close() { q.once.Do(func() { close(q.closing) }) }
