package loopback

import "sync"

// A request reaches memory that someone else may take away: a peer's
// mappings, which the link's teardown unmaps when the peer goes, and the
// segments of this process, which Unregister hands back to their owner.
// Counting the accesses in flight would cost each of them two locked
// instructions, and a locked instruction waits until the request's earlier
// stores have reached the core that holds their lines, which for a request
// to another process is a cross-core round trip.
//
// Instead, every such access is made by a request of this process under its
// send queue's lock (a post, an RNR retry) and first checks that the memory
// is still there (peerConn.usable, memRef.pin). The side that takes the
// memory away marks it gone and then takes the lock of every queue that
// could be using it once: an access that found it there has ended by then,
// and a later one finds it gone. Accesses from other processes, which the
// locks of this one cannot see, are still counted (memRef.counted). The
// price is paid by the taker, rarely: Unregister waits for every post in
// progress in the process, not only for those that use its segment.

// quiesceSendqs waits out the posts in progress on the send queues of c.
func (c *lbContext) quiesceSendqs() {
	if tab := c.sendqs.Load(); tab != nil {
		quiesce(*tab)
	}
}

// processSet is a set of objects of every context of this process.
type processSet[T comparable] struct {
	mu  sync.Mutex
	all map[T]struct{}
}

func (s *processSet[T]) add(x T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		s.all = map[T]struct{}{}
	}
	s.all[x] = struct{}{}
}

func (s *processSet[T]) remove(x T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, x)
}

// processSendqs holds the send queues of every context of this process: an
// import by another context of the process reaches a segment too.
var processSendqs processSet[*sendq]

// processInboxes holds the inboxes of every receive queue of this process.
var processInboxes processSet[*rqInbox]

func trackSendq(q *sendq)      { processSendqs.add(q) }
func untrackSendq(q *sendq)    { processSendqs.remove(q) }
func trackInbox(ib *rqInbox)   { processInboxes.add(ib) }
func untrackInbox(ib *rqInbox) { processInboxes.remove(ib) }

// quiesceProcess waits out the posts in progress on every send queue of
// this process.
func quiesceProcess() {
	processSendqs.mu.Lock()
	qs := make([]*sendq, 0, len(processSendqs.all))
	for q := range processSendqs.all {
		qs = append(qs, q)
	}
	processSendqs.mu.Unlock()
	quiesce(qs)
	// A delivery from an inbox reaches a receive's buffer under the
	// inbox's consumer lock, not a send queue's. The lock is in the
	// inbox's mapping: the set's lock keeps the last unref from
	// unmapping it meanwhile.
	processInboxes.mu.Lock()
	defer processInboxes.mu.Unlock()
	for ib := range processInboxes.all {
		ib.box.Lock(selfPID, nil)
		ib.box.Unlock()
	}
}

func quiesce(qs []*sendq) {
	for _, q := range qs {
		if q != nil {
			q.mu.Lock()
			//lint:ignore SA2001 waiting for the holder is the point
			q.mu.Unlock()
		}
	}
}
