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

// Pins is the number of accesses pinning s, a segment of this process
// (-1 for any other).
func Pins(s provider.Segment) int32 {
	if seg, ok := s.(*segment); ok {
		return seg.ref.inflight.Load()
	}
	return -1
}

// Entries is the number of accesses inside c's peer processes now.
func Entries(c provider.Context) int32 {
	lc, ok := c.(*lbContext)
	if !ok {
		return -1
	}
	lc.peersMu.Lock()
	defer lc.peersMu.Unlock()
	var n int32
	for _, p := range lc.peers {
		n += p.inflight.Load()
	}
	return n
}
