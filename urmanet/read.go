package urmanet

import (
	"io"
	"net"
)

// Read reads the stream: what arrived, up to len(b), waiting for some
// when nothing did. It returns io.EOF after the peer's FIN.
func (c *Conn) Read(b []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	w := waiter{st: &c.rspin}
	defer c.unwaitLocked(&w)
	for {
		if c.closed {
			return 0, c.opErr("read", net.ErrClosed)
		}
		if c.rxN > 0 {
			break
		}
		if c.eof {
			return 0, io.EOF
		}
		if c.err != nil {
			// What arrived before the failure (the peer's last DATA and
			// its FIN, say) is still read first.
			if c.progressLocked() {
				continue
			}
			return 0, c.opErr("read", c.err)
		}
		if len(b) == 0 {
			return 0, nil
		}
		if err := c.waitLocked(c.rxWake, &c.rdl, &w); err != nil {
			return 0, c.opErr("read", err)
		}
	}
	n := 0
	for c.rxN > 0 && n < len(b) {
		h := c.rxHead
		i := c.rx[h]
		if r := c.rxRing[h]; r > 0 {
			off := int(c.ringHead % uint64(len(c.ringBuf)))
			k := copy(b[n:], c.ringBuf[off:off+r-c.rxOff])
			n += k
			c.rxOff += k
			c.ringHead += uint64(k)
			c.ringOwed += k
			if c.rxOff < r {
				break
			}
		} else {
			end := c.rxLen[h]
			k := copy(b[n:], c.slot(i)[hdrSize+c.rxOff:end])
			n += k
			c.rxOff += k
			if hdrSize+c.rxOff < end {
				break
			}
		}
		c.rxHead, c.rxN, c.rxOff = (h+1)%nRecv, c.rxN-1, 0
		if err := c.repost(i); err != nil {
			c.failLocked(err)
			break
		}
		c.owed++
	}
	c.maybeCreditLocked()
	return n, nil
}
