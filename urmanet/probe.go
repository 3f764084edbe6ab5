package urmanet

import (
	"time"
)

// probeEvery is how often a connection with a waiting Read or Write that
// heard nothing from its peer since the last tick asks whether the peer
// is still there.
const probeEvery = 200 * time.Millisecond

// probeCtx is the user context of a probe's READ; probeOff is where in the
// connection's segment it lands.
const (
	probeCtx = ringWriteCtx + 1
	kickCtx  = ringWriteCtx + 2
	probeOff = nSlots * SlotSize
	probeLen = 8
)

// startProbes arms the connection's probe timer.
func (c *Conn) startProbes() {
	c.mu.Lock()
	c.probe = time.AfterFunc(probeEvery, c.probeTick)
	c.mu.Unlock()
}

// probeTick sends a probe when one is due: a READ of a few bytes of the
// peer's ring, which asks nothing of the peer's process (a peer that is
// slow to read is not mistaken for a lost one) and fails when the peer is
// gone; its failure fails the connection and wakes the waiters, so that a
// Read or Write waiting on a dead peer ends with an error instead of at
// its deadline.
func (c *Conn) probeTick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.released {
		return
	}
	heard := c.heard
	c.heard = false
	if c.waiting > 0 && !heard && !c.probing && c.err == nil && c.peerRing != nil {
		err := c.j.Read(c.peer, c.peerRing.SGE(0, probeLen), c.seg.SGE(probeOff, probeLen), 0, probeCtx)
		if err != nil {
			c.failLocked(err)
		} else {
			c.probing = true
		}
	}
	c.probe.Reset(probeEvery)
}
