package loopback

import "github.com/urma-go/sdk/provider"

// SetRuns turns the delivery of SEND runs (sendrun.go) on or off, so that a
// test can compare a post list delivered in runs with the same list
// delivered one request at a time. Only for tests, and only while no post
// is under way.
func SetRuns(on bool) { runsOff = !on }

// Quarantined counts the segments whose memory was kept because an access
// still pinned them after the drain timeout.
func Quarantined() int {
	quarantined.mu.Lock()
	defer quarantined.mu.Unlock()
	return len(quarantined.segs)
}

// HoldQueue takes the lock of q, a JFS of this provider, as a post in
// progress holds it, and returns its release.
func HoldQueue(q provider.JFS) func() {
	s := q.(*jfsObj).sendq
	s.mu.Lock()
	return s.mu.Unlock
}

// PeerTeardowns returns, for each peer process c is linked to now, a
// channel closed once the link's teardown has unmapped the peer's memory.
func PeerTeardowns(c provider.Context) []<-chan struct{} {
	lc := c.(*lbContext)
	lc.peersMu.Lock()
	defer lc.peersMu.Unlock()
	var out []<-chan struct{}
	for _, p := range lc.peers {
		out = append(out, p.torn)
	}
	return out
}

// MarkJFRClosing sets the state word of j, a JFR of this provider, as its
// Close does right after it marks the object closed, and returns the
// restore: a post that got in before the mark sees this.
func MarkJFRClosing(j provider.JFR) func() {
	q := j.(*jfrObj).recvq
	q.setState(stateClosed)
	return func() { q.setState(uint32(provider.StateReady)) }
}

// EnterJFR counts a caller into j, a JFR of this provider, as a post of
// receives (posting) or a sender's delivery does, and returns its leave;
// ok is false when j is closed and nothing was counted.
func EnterJFR(j provider.JFR, posting bool) (leave func(), ok bool) {
	q := j.(*jfrObj).recvq
	if posting {
		return func() { q.posting.n.Add(-1) }, q.posting.enter(&q.closed)
	}
	return q.leave, q.enter()
}
