package urmanet

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// loopbackCtx opens a loopback context, closed with the test or fuzz
// target.
func loopbackCtx(tb testing.TB) *urma.Context {
	tb.Helper()
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		tb.Fatal(err)
	}
	uctx, err := urma.Open(dev, 0, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { uctx.Close() })
	return uctx
}

func FuzzParseSyn(f *testing.F) {
	uctx := loopbackCtx(f)
	c, err := newConn(uctx, true, true)
	if err != nil {
		f.Fatal(err)
	}
	n, err := c.synPayload(firstCtl, msgSyn)
	if err != nil {
		f.Fatal(err)
	}
	good := bytes.Clone(c.slot(firstCtl)[:n])
	if err := c.Close(); err != nil {
		f.Fatal(err)
	}
	if _, err := parseSyn(good); err != nil {
		f.Fatalf("a connection's own SYN: %v", err)
	}
	f.Add(good)
	f.Add(good[:synSize-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSyn(b)
		if err != nil {
			return
		}
		if len(b) != synSize {
			t.Fatalf("accepted a handshake of %d bytes", len(b))
		}
		if s.window == 0 || s.window > Window {
			t.Fatalf("accepted window %d", s.window)
		}
		if s.ringSize < minRing || uint64(s.ringSize) > s.ring.Len {
			t.Fatalf("accepted a ring of %d bytes in a segment of %d", s.ringSize, s.ring.Len)
		}
		if s.token != binary.LittleEndian.Uint32(b[synToken:]) {
			t.Fatalf("token %#x from %x", s.token, b)
		}
		// What was accepted describes itself the same way again.
		d, err := s.desc.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted Jetty descriptor does not marshal: %v", err)
		}
		var jd jetty.Descriptor
		if err := jd.UnmarshalBinary(d); err != nil || jd != s.desc {
			t.Fatalf("Jetty descriptor %v does not round-trip (%v)", s.desc, err)
		}
		d, err = s.ring.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted ring descriptor does not marshal: %v", err)
		}
		var sd segment.Descriptor
		if err := sd.UnmarshalBinary(d); err != nil || sd != s.ring {
			t.Fatalf("ring descriptor %v does not round-trip (%v)", s.ring, err)
		}
	})
}

func FuzzHdr(f *testing.F) {
	f.Add(fuzzMsg(msgData, 1, 2, "")[2:])
	f.Add(bytes.Repeat([]byte{0xff}, hdrSize+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < hdrSize {
			return
		}
		typ, credit, ring := getHdr(b)
		if typ != b[0] || credit != binary.LittleEndian.Uint32(b[4:]) || ring != binary.LittleEndian.Uint32(b[8:]) {
			t.Fatalf("getHdr(%x) = %d, %d, %d", b[:hdrSize], typ, credit, ring)
		}
		var h [hdrSize]byte
		putHdr(h[:], typ, credit, ring)
		t2, c2, r2 := getHdr(h[:])
		if t2 != typ || c2 != credit || r2 != ring || h[1]|h[2]|h[3]|h[12]|h[13]|h[14]|h[15] != 0 {
			t.Fatalf("putHdr(%d, %d, %d) = %x", typ, credit, ring, h)
		}
	})
}

// fuzzMessages splits a fuzz input into at most maxMsgs messages: each is
// a 2-byte little-endian length (taken modulo SlotSize+1) and that many
// bytes, the last one cut short by the end of the input.
func fuzzMessages(b []byte, maxMsgs int) [][]byte {
	var msgs [][]byte
	for len(b) >= 2 && len(msgs) < maxMsgs {
		n := int(binary.LittleEndian.Uint16(b)) % (SlotSize + 1)
		b = b[2:]
		n = min(n, len(b))
		msgs = append(msgs, b[:n])
		b = b[n:]
	}
	return msgs
}

// fuzzMsg is one message of a FuzzMessage input.
func fuzzMsg(typ uint8, credit, ring uint32, payload string) []byte {
	b := make([]byte, 2+hdrSize+len(payload))
	binary.LittleEndian.PutUint16(b, uint16(hdrSize+len(payload)))
	putHdr(b[2:], typ, credit, ring)
	copy(b[2+hdrSize:], payload)
	return b
}

// fuzzRingMsg is a RING message of a FuzzMessage input announcing n bytes.
func fuzzRingMsg(n uint64) []byte {
	var c [8]byte
	binary.LittleEndian.PutUint64(c[:], n)
	return fuzzMsg(msgRing, 0, 0, string(c[:]))
}

// FuzzMessage delivers arbitrary messages to a connection, as its peer's
// SENDs, and hands each to the connection's handler as a waiting Read or
// Write does. Nothing may panic; the connection either fails with an
// error or keeps its invariants: a message it took was well formed,
// credits and ring space stay within what the peer granted, and the
// stream it queued (DATA payloads, ring bytes RING messages announced)
// reads back unchanged and in order.
func FuzzMessage(f *testing.F) {
	f.Add(fuzzMsg(msgData, 0, 0, "hello"))
	f.Add(append(fuzzMsg(msgData, 0, 0, "a"), fuzzMsg(msgFin, 0, 0, "")...))
	f.Add(append(fuzzMsg(msgFin, 0, 0, ""), fuzzMsg(msgData, 0, 0, "late")...))
	f.Add(append(fuzzRingMsg(100), fuzzRingMsg(RingSize-100)...))
	f.Add(fuzzRingMsg(RingSize + 1))
	f.Add(fuzzRingMsg(0))
	f.Add(fuzzMsg(msgCredit, 0, 0, ""))
	f.Add(fuzzMsg(msgCredit, 1, 0, ""))
	f.Add(fuzzMsg(msgCredit, 0xffffffff, 0, ""))
	f.Add(fuzzMsg(msgCredit, 0, 1, ""))
	f.Add(fuzzMsg(0, 0, 0, ""))
	f.Add(fuzzMsg(0xff, 0, 0, "x"))
	f.Add(fuzzMsg(msgSyn, 0, 0, ""))
	f.Add(fuzzMsg(msgSynAck, 0, 0, ""))
	f.Add(fuzzMsg(msgRst, 0, 0, ""))
	f.Add([]byte{3, 0, msgData, 0, 0})
	f.Add([]byte{0, 0})

	uctx := loopbackCtx(f)
	// A pair that an input leaves as it was made (not failed, no FIN,
	// everything read) serves the next input: making one costs
	// milliseconds, most of them in the imports.
	var kept *fuzzConns
	f.Cleanup(func() {
		if kept != nil {
			kept.close()
		}
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		msgs := fuzzMessages(in, 8)
		p := kept
		kept = nil
		if p == nil {
			var err error
			if p, err = newFuzzConns(uctx); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			if kept != p {
				p.close()
			}
		}()
		c, s := p.c, p.s
		var want []byte
		for k, m := range msgs {
			// The peer sends m from a DATA slot of its own.
			i := firstData
			copy(s.slot(i), m)
			if err := s.sendLocked(i, len(m)); err != nil {
				t.Fatalf("send %d: %v", k, err)
			}
			cr := p.takeRecv(t)
			c.mu.Lock()
			ann := c.ringAnn
			c.handleLocked(&cr)
			failed := c.err != nil
			credits, ringAvail, rxN := c.credits, c.ringAvail, c.rxN
			announced := c.ringAnn - ann
			queued := c.ringAnn - c.ringHead
			c.mu.Unlock()
			p.takeSend(t)
			if failed {
				return
			}
			// Not failed: the message was well formed.
			if len(m) < hdrSize {
				t.Fatalf("message %d of %d bytes taken", k, len(m))
			}
			typ, _, _ := getHdr(m)
			switch typ {
			case msgData:
				want = append(want, m[hdrSize:]...)
			case msgRing:
				start := ann % RingSize
				if len(m) != ringMsgSize || announced == 0 || start+announced > RingSize {
					t.Fatalf("RING message %d (%x) taken as %d bytes at %d", k, m, announced, start)
				}
				want = append(want, c.ringBuf[start:start+announced]...)
			case msgCredit, msgFin, msgSynAck:
			default:
				t.Fatalf("message %d of type %d taken", k, typ)
			}
			if typ != msgRing && announced != 0 {
				t.Fatalf("message %d of type %d announced %d ring bytes", k, typ, announced)
			}
			// The peer can return only what it was given: this side
			// sent nothing, so it still has all the peer granted.
			if credits != Window || ringAvail != RingSize {
				t.Fatalf("message %d left %d credits and %d ring bytes, granted %d and %d",
					k, credits, ringAvail, Window, RingSize)
			}
			if queued > RingSize {
				t.Fatalf("message %d left %d ring bytes queued in a ring of %d", k, queued, RingSize)
			}
			if rxN > k+1 {
				t.Fatalf("%d messages queued after %d", rxN, k+1)
			}
		}
		// What was queued reads back as it was sent.
		var got []byte
		buf := make([]byte, SlotSize)
		for {
			c.mu.Lock()
			more := c.rxN > 0
			c.mu.Unlock()
			if !more {
				break
			}
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes, sent %d: differ", len(got), len(want))
		}
		if p.reset() {
			kept = p
		}
	})
}

// fuzzConns are two connections of one context, each connected to the
// other, with no parker or probes: the test takes their completion
// records itself. c's ring holds a pattern, so that ring bytes read back
// are checked.
type fuzzConns struct{ c, s *Conn }

func newFuzzConns(uctx *urma.Context) (*fuzzConns, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := newConn(uctx, true, true)
	if err != nil {
		return nil, err
	}
	s, err := newConn(uctx, true, true)
	if err != nil {
		c.Close()
		return nil, err
	}
	p := &fuzzConns{c, s}
	for i := range 251 {
		c.ringBuf[i] = byte(i*7 + 1)
	}
	for n := 251; n < len(c.ringBuf); n *= 2 {
		copy(c.ringBuf[n:], c.ringBuf[:n])
	}
	info := func(p *Conn) synInfo {
		return synInfo{desc: p.j.Descriptor(), token: p.token, window: Window,
			ring: p.ring.Descriptor(), ringSize: uint32(len(p.ringBuf))}
	}
	if err := c.connect(ctx, info(s)); err != nil {
		p.close()
		return nil, err
	}
	if err := s.connect(ctx, info(c)); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *fuzzConns) close() {
	p.s.Close()
	p.c.Close()
}

// fuzzPair makes fuzzConns closed with the test.
func fuzzPair(t *testing.T, uctx *urma.Context) (c, s *Conn) {
	t.Helper()
	p, err := newFuzzConns(uctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p.c, p.s
}

// takeRecv returns c's next receive record; the records of the CREDITs c
// sent while it read go to its handler.
func (p *fuzzConns) takeRecv(t *testing.T) jetty.CR {
	t.Helper()
	for {
		cr := fuzzTake(t, p.c.jfc)
		if int(cr.UserCtx) < nRecv {
			return cr
		}
		p.c.mu.Lock()
		p.c.handleLocked(&cr)
		p.c.mu.Unlock()
	}
}

// takeSend takes the record of s's send; the CREDITs s received are
// dropped and their receives posted again.
func (p *fuzzConns) takeSend(t *testing.T) {
	t.Helper()
	for {
		cr := fuzzTake(t, p.s.jfc)
		if i := int(cr.UserCtx); i >= nRecv {
			return
		} else if err := p.s.repost(i); err != nil {
			t.Fatal(err)
		}
	}
}

// reset makes c as it was made, if an input left it connected with
// nothing to read, and reports whether it did.
func (p *fuzzConns) reset() bool {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.eof || c.rxN != 0 || c.ringAnn != c.ringHead {
		return false
	}
	c.ringAnn, c.ringHead, c.owed, c.ringOwed = 0, 0, 0, 0
	c.heard, c.synack = false, nil
	return true
}

// fuzzTake returns the next completion record of jfc.
func fuzzTake(t *testing.T, jfc *jetty.JFC) jetty.CR {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	crs := make([]jetty.CR, 1)
	n, err := jfc.PollWait(ctx, crs, time.Millisecond)
	if err != nil || n != 1 {
		t.Fatalf("no completion: %d, %v", n, err)
	}
	return crs[0]
}
