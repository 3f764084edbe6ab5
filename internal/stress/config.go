package stress

import (
	"fmt"
	"time"
)

// Config is a node's configuration. Zero fields take the defaults below.
type Config struct {
	// Device is the device to open: loopback0 by default.
	Device string
	// EID is the index of the EID to open.
	EID int
	// Workers is how many queue sets run at once. Of every four, the first
	// two have an RM JFS and JFR, the other two an RC Jetty bound to the
	// peer's; the even ones wait in event mode, the odd ones busy-poll.
	// Default 4: one of each.
	Workers int
	// Ledger makes the node announce each WRITE into the peer before
	// posting it and again once it completed, so that a peer that
	// outlives this node can check the data it was told is complete.
	Ledger bool
	// Drain is how long requests in flight may take to finish once the
	// run ends (or the peer is gone) before the node reports a hang.
	// Default 30 s.
	Drain time.Duration
	// RNRRetry and RNRTimeout are the JFSs': a SEND that finds no receive
	// waits RNRTimeout up to RNRRetry times (7: for ever). Default 7 and
	// 10 ms: a slow receiver is no error in a soak.
	RNRRetry   int
	RNRTimeout time.Duration
}

// Layout of one worker's region of a node's segment. The peer's worker of
// the same index WRITEs and READs the area, uses the atomic words, and
// SENDs into the receive buffers; the scratch is this worker's own source
// and destination memory.
const (
	slotSize  = 4096 // one WRITE block at most
	slots     = 16   // WRITEs (and their READ-backs) in flight at most
	recvs     = 32   // receives posted
	msgSize   = 1024 // one SEND at most
	sendSlots = 8    // SENDs in flight at most

	areaOff    = 0
	atomicOff  = areaOff + slots*slotSize // the FADD word, then the CAS word
	recvOff    = atomicOff + 64
	scratchOff = recvOff + recvs*msgSize
	sendOff    = scratchOff + slots*slotSize
	resultOff  = sendOff + sendSlots*msgSize // an atomic's old value
	regionSize = resultOff + 64
)

func (c Config) withDefaults() (Config, error) {
	if c.Device == "" {
		c.Device = "loopback0"
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Drain == 0 {
		c.Drain = 30 * time.Second
	}
	if c.RNRRetry == 0 {
		c.RNRRetry = 7
	}
	if c.RNRTimeout == 0 {
		c.RNRTimeout = 10 * time.Millisecond
	}
	if c.Workers < 1 || c.Workers > 64 || c.EID < 0 || c.Drain < 0 || c.RNRRetry < 0 || c.RNRRetry > 7 {
		return c, fmt.Errorf("stress: bad config %+v", c)
	}
	return c, nil
}
