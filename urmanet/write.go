package urmanet

import (
	"encoding/binary"
	"net"
	"os"
	"unsafe"

	"github.com/urma-go/sdk/segment"
)

// Write writes b to the stream, waiting for the peer's credit when it has
// none. Small writes travel in DATA messages of up to SlotSize-16 bytes
// copied into send buffers; from bigWrite bytes on, b is registered for
// the call and WRITEn straight into the peer's ring, each part announced
// by a RING message.
func (c *Conn) Write(b []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.writeLocked(b)
	// The provider may read b until its WRITEs complete.
	c.drainLocked()
	return n, err
}

// registered returns a registration of b for WRITEs from it: the one of
// the last large write when b lies within its buffer (a writer that
// reuses its buffer registers it once), else a new one, which replaces
// it. The connection keeps that buffer referenced until it registers
// another or closes.
func (c *Conn) registered(b []byte) (*segment.Segment, uint64, error) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if r := c.wreg; r != nil && p >= c.wregBase && p+uintptr(len(b)) <= c.wregBase+uintptr(r.Len()) {
		return r, uint64(p - c.wregBase), nil
	}
	b = b[:cap(b)]
	r, err := segment.Register(c.uctx, b, segment.Config{Access: segment.LocalOnly})
	if err != nil {
		return nil, 0, err
	}
	if c.wreg != nil {
		c.wreg.Close()
	}
	c.wreg, c.wregBase = r, p
	return r, 0, nil
}

func (c *Conn) writeLocked(b []byte) (int, error) {
	n := 0
	w := waiter{st: &c.wspin}
	defer c.unwaitLocked(&w)
	for {
		switch {
		case c.closed:
			return n, c.opErr("write", net.ErrClosed)
		case c.wclosed:
			return n, c.opErr("write", errWriteClosed)
		case c.err != nil:
			return n, c.opErr("write", c.err)
		}
		if n == len(b) {
			return n, nil
		}
		if isClosed(c.wdl.wait()) {
			return n, c.opErr("write", os.ErrDeadlineExceeded)
		}
		big := len(b)-n >= bigWrite && c.peerRing != nil
		if c.credits == 0 || len(c.freeData) == 0 || big && c.ringAvail == 0 {
			if err := c.waitLocked(c.txWake, &c.wdl, &w); err != nil {
				return n, c.opErr("write", err)
			}
			continue
		}
		i := c.freeData[len(c.freeData)-1]
		s := c.slot(i)
		var k int
		if big {
			reg, off, err := c.registered(b)
			if err != nil {
				return n, c.opErr("write", err)
			}
			tail := int(c.ringTail % uint64(c.peerRingSize))
			k = min(len(b)-n, c.ringAvail, c.peerRingSize-tail, ringChunk)
			if err := c.j.Write(c.peer, c.peerRing.SGE(uint64(tail), uint32(k)), reg.SGE(off+uint64(n), uint32(k)), 0, ringWriteCtx); err != nil {
				c.failLocked(err)
				continue
			}
			c.writesOut++
			c.ringTail += uint64(k)
			c.ringAvail -= k
			c.hdrLocked(s, msgRing)
			binary.LittleEndian.PutUint64(s[hdrSize:], uint64(k))
			if err := c.sendLocked(i, ringMsgSize); err != nil {
				c.failLocked(err)
				continue
			}
		} else {
			k = copy(s[hdrSize:], b[n:])
			c.hdrLocked(s, msgData)
			if err := c.sendLocked(i, hdrSize+k); err != nil {
				c.failLocked(err)
				continue
			}
		}
		c.sentLocked()
		c.freeData = c.freeData[:len(c.freeData)-1]
		c.credits--
		n += k
	}
}

// noDeadline is a deadline that never passes.
var noDeadline = newDeadline()

// drainLocked waits until the WRITEs posted are complete, or the queues
// are gone with Close.
func (c *Conn) drainLocked() {
	var w waiter
	for c.writesOut > 0 && !c.released {
		c.waitLocked(c.txWake, &noDeadline, &w)
	}
	c.unwaitLocked(&w)
}
