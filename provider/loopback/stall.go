package loopback

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// stalledQueues lists the send queues completing into a JFC that hold
// requests waiting for a receive (RNR). The JFC's Poll retries them when it
// finds no record. A receive posted in this process kicks its waiting
// senders, but one posted by a peer process kicks nobody here: without
// this, a sender that outruns a receiver in another process would sit out
// a whole RNR timeout every time, while its owner polls for the very
// completions the retry would produce.
type stalledQueues struct {
	any atomic.Bool // whether list is not empty, read by every empty Poll
	mu  sync.Mutex
	// list is kept in place, so that a queue stalling again costs no
	// allocation.
	list []*sendq
}

// add puts q on the list; q.mu is held.
func (s *stalledQueues) add(q *sendq) {
	s.mu.Lock()
	if !slices.Contains(s.list, q) {
		s.list = append(s.list, q)
	}
	s.any.Store(true)
	s.mu.Unlock()
}

// remove takes q off the list (q is being destroyed).
func (s *stalledQueues) remove(q *sendq) {
	s.mu.Lock()
	if i := slices.Index(s.list, q); i >= 0 {
		s.list = slices.Delete(s.list, i, i+1)
	}
	s.any.Store(len(s.list) > 0)
	s.mu.Unlock()
}

// retry runs the waiting requests of every listed queue whose lock is free
// (a queue busy posting makes progress itself) and drops the queues left
// with none. A retry from here does not count against the RNR retry limit
// and does not restart the RNR timer: only the timer measures how long a
// request has waited, as the retry count of a real device does.
func (s *stalledQueues) retry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.list[:0]
	for _, q := range s.list {
		if q.closed.Load() {
			continue
		}
		if !q.mu.TryLock() {
			keep = append(keep, q)
			continue
		}
		if q.state == provider.StateReady && len(q.pending) > 0 {
			q.progress(retryPoll)
		}
		if len(q.pending) > 0 {
			keep = append(keep, q)
		}
		q.mu.Unlock()
	}
	clear(s.list[len(keep):])
	s.list = keep
	s.any.Store(len(keep) > 0)
}
