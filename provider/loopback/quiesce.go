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

// processSendqs holds the send queues of every context of this process: an
// import by another context of the process reaches a segment too.
var processSendqs struct {
	mu  sync.Mutex
	all map[*sendq]struct{}
}

func trackSendq(q *sendq) {
	processSendqs.mu.Lock()
	defer processSendqs.mu.Unlock()
	if processSendqs.all == nil {
		processSendqs.all = map[*sendq]struct{}{}
	}
	processSendqs.all[q] = struct{}{}
}

func untrackSendq(q *sendq) {
	processSendqs.mu.Lock()
	defer processSendqs.mu.Unlock()
	delete(processSendqs.all, q)
}

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
	// inbox's mapping: the list's lock keeps the last unref from
	// unmapping it meanwhile.
	processInboxes.mu.Lock()
	defer processInboxes.mu.Unlock()
	for ib := range processInboxes.all {
		ib.lock(nil)
		ib.unlock()
	}
}

// processInboxes holds the inboxes of every receive queue of this process.
var processInboxes struct {
	mu  sync.Mutex
	all map[*rqInbox]struct{}
}

func trackInbox(ib *rqInbox) {
	processInboxes.mu.Lock()
	defer processInboxes.mu.Unlock()
	if processInboxes.all == nil {
		processInboxes.all = map[*rqInbox]struct{}{}
	}
	processInboxes.all[ib] = struct{}{}
}

func untrackInbox(ib *rqInbox) {
	processInboxes.mu.Lock()
	defer processInboxes.mu.Unlock()
	delete(processInboxes.all, ib)
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
