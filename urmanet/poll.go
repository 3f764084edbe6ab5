package urmanet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// start makes the connection's probe timer and, when its JFC has a JFCE,
// the context its parked waiters sleep under until Close.
func (c *Conn) start() {
	c.startProbes()
	if c.jfce == nil {
		return
	}
	c.life, c.stop = context.WithCancel(context.Background())
}

// progressLocked takes and handles the records that are there; it reports
// whether there were any.
func (c *Conn) progressLocked() bool {
	if c.released {
		return false
	}
	n, err := c.jfc.Poll(c.crs[:])
	if err != nil {
		if !c.closed {
			c.failLocked(err)
		}
		return true
	}
	for i := range n {
		c.handleLocked(&c.crs[i])
	}
	return n > 0
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *Conn) failLocked(err error) {
	if c.err == nil {
		c.err = err
	}
	wake(c.rxWake)
	wake(c.txWake)
}

// handleLocked takes one completion record.
func (c *Conn) handleLocked(cr *jetty.CR) {
	i := int(cr.UserCtx)
	c.heard = true
	if i == kickCtx {
		c.kicking = false
		if !cr.OK() && !c.closed {
			c.failLocked(fmt.Errorf("%w: %w", ErrPeerLost, cr.Err()))
		}
		return
	}
	if i == probeCtx {
		c.probing = false
		if !cr.OK() && !c.closed {
			c.failLocked(fmt.Errorf("%w: %w", ErrPeerLost, cr.Err()))
		}
		return
	}
	if !cr.OK() && !c.closed {
		c.failLocked(crErr(cr))
	}
	if i == ringWriteCtx {
		c.writesOut--
		wake(c.txWake)
		return
	}
	if i < 0 || i >= nSlots {
		return
	}
	if i >= nRecv { // a send finished
		if i >= firstCtl {
			c.freeCtl = append(c.freeCtl, i)
			c.maybeCreditLocked()
		} else {
			c.freeData = append(c.freeData, i)
		}
		wake(c.txWake)
		return
	}
	if !cr.OK() {
		return
	}
	b := c.slot(i)[:cr.Len]
	if len(b) < hdrSize {
		c.failLocked(provider.Errorf(urma.ErrInvalid, "message of %d bytes", len(b)))
		return
	}
	typ, credit, ring := getHdr(b)
	if uint64(credit) > uint64(c.peerWindow-c.credits) || uint64(ring) > uint64(c.peerRingSize-c.ringAvail) {
		c.failLocked(provider.Errorf(urma.ErrInvalid, "peer returned %d receives and %d ring bytes, beyond what it was sent", credit, ring))
		return
	}
	c.credits += int(credit)
	c.ringAvail += int(ring)
	if credit > 0 || ring > 0 {
		wake(c.txWake)
	}
	switch typ {
	case msgData:
		c.queueLocked(i, len(b), 0)
		return
	case msgRing:
		c.ringMsgLocked(i, b)
		return
	case msgFin:
		c.eof = true
		wake(c.rxWake)
	case msgRst:
		c.failLocked(ErrRefused)
	case msgSynAck:
		if c.peer != nil {
			c.failLocked(provider.Errorf(urma.ErrInvalid, "handshake on a connection already made"))
		} else if s, err := parseSyn(b); err != nil {
			c.failLocked(err)
		} else {
			c.synack = &s
		}
	case msgCredit:
	default:
		c.failLocked(provider.Errorf(urma.ErrInvalid, "message type %d", typ))
	}
	if err := c.repost(i); err != nil {
		c.failLocked(err)
	}
}

// queueLocked hands the message in slot i to Read.
func (c *Conn) queueLocked(i, n, ring int) {
	if c.eof || c.rxN == nRecv {
		c.failLocked(provider.Errorf(urma.ErrInvalid, "data after the end of the stream or beyond the window"))
		return
	}
	k := (c.rxHead + c.rxN) % nRecv
	c.rx[k], c.rxLen[k], c.rxRing[k] = i, n, ring
	c.rxN++
	wake(c.rxWake)
}

// ringMsgLocked takes a RING message: the writer put its count of bytes in
// the ring after what it announced before.
func (c *Conn) ringMsgLocked(i int, b []byte) {
	if len(b) != ringMsgSize || c.ring == nil {
		c.failLocked(provider.Errorf(urma.ErrInvalid, "ring message of %d bytes", len(b)))
		return
	}
	n := binary.LittleEndian.Uint64(b[hdrSize:])
	start := c.ringAnn % uint64(len(c.ringBuf))
	if n == 0 || start+n > uint64(len(c.ringBuf)) || c.ringAnn+n-c.ringHead > uint64(len(c.ringBuf)) {
		c.failLocked(provider.Errorf(urma.ErrInvalid, "ring message of %d bytes at %d, outside the ring", n, start))
		return
	}
	c.ringAnn += n
	c.queueLocked(i, len(b), int(n))
}

// sendLocked posts slot i with n bytes to the peer.
func (c *Conn) sendLocked(i, n int) error {
	return c.j.Send(c.peer, c.seg.SGE(uint64(i*SlotSize), uint32(n)), 0, uint64(i))
}

// hdrLocked writes a header into b that returns what this side owes.
func (c *Conn) hdrLocked(b []byte, typ uint8) {
	putHdr(b, typ, uint32(c.owed), uint32(c.ringOwed))
}

// sentLocked records that a header written by hdrLocked went out.
func (c *Conn) sentLocked() { c.owed, c.ringOwed = 0, 0 }

// ctlLocked sends a header-only message from a control slot; false when
// none is free.
func (c *Conn) ctlLocked(typ uint8) bool {
	if len(c.freeCtl) == 0 || c.peer == nil {
		return false
	}
	i := c.freeCtl[len(c.freeCtl)-1]
	c.hdrLocked(c.slot(i), typ)
	if err := c.sendLocked(i, hdrSize); err != nil {
		c.failLocked(err)
		return false
	}
	c.freeCtl = c.freeCtl[:len(c.freeCtl)-1]
	c.sentLocked()
	return true
}

// maybeCreditLocked returns owed receives once half the window is owed,
// and ring bytes once half the ring is.
// A peer that sent its FIN needs no credit.
func (c *Conn) maybeCreditLocked() {
	if (c.owed >= Window/2 || c.ringOwed >= len(c.ringBuf)/2 && c.ringOwed > 0) && !c.closed && !c.eof && c.err == nil {
		c.ctlLocked(msgCredit)
	}
}

// spinState sets how long the waits of one kind (Reads or Writes of a
// connection) spin: the full spinFor while they end within it, halved by
// each one that outlasts it, so that a connection whose answers come
// slower than a spin (a server that computes, a client that thinks)
// stops burning a core on every wait and parks at once. One wait in
// spinRetry spins in full whatever the budget, and a short one restores
// it: a parked wait lasts the wake-up's cost longer than the answer
// took, and could not tell.
type spinState struct {
	budget time.Duration
	waits  uint32
}

const spinRetry = 16

// waiter is the state of one wait of a Read or Write.
type waiter struct {
	counted  bool // in c.waiting
	spinning bool
	first    time.Duration // when the wait began
	start    time.Duration // when the current spin began
	limit    time.Duration // how long it spins
	st       *spinState    // nil: spin for spinFor
	idle     spin.Wait
	pace     spin.Pacer
}

// waitLocked waits for the connection to change, one step at a time: it
// polls the JFC and returns when that took records; within the spin
// budget (always, in polling mode) it lets the caller look again after a
// short pause; past it, it drops mu and sleeps until ch is woken, the
// deadline passes or the connection closes, the parker watching the JFCE
// meanwhile. The caller checks the state again after every return
// without error.
func (c *Conn) waitLocked(ch chan struct{}, dl *deadline, w *waiter) error {
	if !w.counted {
		w.counted, w.first, w.limit = true, spin.Now(), spinFor
		if st := w.st; st != nil {
			st.waits++
			if st.waits%spinRetry != 0 {
				w.limit = st.budget
			}
		}
		c.waiting++
	}
	if c.progressLocked() {
		w.spinning = false
		return nil
	}
	d := dl.wait()
	if isClosed(d) {
		return os.ErrDeadlineExceeded
	}
	if !w.spinning {
		w.spinning, w.start = true, spin.Now()
	}
	if c.jfce == nil || c.stop == nil || spin.Now()-w.start < w.limit {
		c.mu.Unlock()
		w.idle.Idle()
		w.pace.Tick()
		c.mu.Lock()
		return nil
	}
	if !c.sleeping {
		// This waiter sleeps on the JFCE for all: the goroutine the event
		// wakes is the one that waits, with no hand-off. A deadline that
		// passes meanwhile kicks it (kick).
		c.sleeping = true
		c.sleepers.Add(1)
		c.mu.Unlock()
		err := c.jfc.Rearm(false)
		if err == nil {
			err = c.jfc.Wait(c.life)
		} else if errors.Is(err, provider.ErrUnreadRecords) {
			err = nil
		}
		c.mu.Lock()
		c.sleeping = false
		c.sleepers.Done()
		if err != nil && c.life.Err() == nil && !c.closed {
			c.failLocked(err)
		}
		if c.parked > 0 {
			// One of the others sleeps on the JFCE next.
			wake(c.rxWake)
			wake(c.txWake)
		}
		w.spinning = false
		return nil
	}
	c.parked++
	c.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-d:
		err = os.ErrDeadlineExceeded
	case <-c.closing:
	}
	c.mu.Lock()
	c.parked--
	w.spinning = false
	return err
}

// unwaitLocked ends a wait that waitLocked counted, and sets the spin
// budget of the waits of its kind by how long it lasted.
func (c *Conn) unwaitLocked(w *waiter) {
	if !w.counted {
		return
	}
	w.counted = false
	c.waiting--
	if st := w.st; st != nil {
		if spin.Now()-w.first <= spinFor {
			st.budget = spinFor
		} else {
			st.budget /= 2
		}
	}
}

// crErr is the error of a failed request: ErrPeerLost for a peer that
// stopped answering or whose Jetty is gone, as well as the record's own.
func crErr(cr *jetty.CR) error {
	switch cr.Status {
	case urma.CRAckTimeoutErr, urma.CRRemAccessAbortErr, urma.CRRNRRetryCntExcErr:
		return fmt.Errorf("%w: %w", ErrPeerLost, cr.Err())
	}
	return cr.Err()
}

// kick wakes the waiter sleeping on the JFCE, if any, once a deadline
// passed: it posts a READ of the peer's ring, whose record raises the
// event the waiter sleeps for. A failed kick fails the connection as a
// probe does.
func (c *Conn) kick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sleeping || c.kicking || c.closed || c.released || c.err != nil || c.peerRing == nil {
		return
	}
	if err := c.j.Read(c.peer, c.peerRing.SGE(0, probeLen), c.seg.SGE(probeOff+probeLen, probeLen), 0, kickCtx); err != nil {
		c.failLocked(err)
		return
	}
	c.kicking = true
}
