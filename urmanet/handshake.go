package urmanet

import (
	"context"
	"encoding/binary"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// synInfo is what a SYN or SYNACK carries.
type synInfo struct {
	desc     jetty.Descriptor
	token    uint32
	window   uint32
	ring     segment.Descriptor
	ringSize uint32
}

// Offsets in a SYN or SYNACK, after the header.
const (
	synJetty    = hdrSize
	synToken    = synJetty + 32
	synWindow   = synToken + 4
	synRing     = synWindow + 4
	synRingSize = synRing + segment.DescriptorSize
)

// minRing is the smallest ring a peer may name.
const minRing = 4 << 10

// synPayload writes a SYN or SYNACK into slot i and returns its length.
func (c *Conn) synPayload(i int, typ uint8) (int, error) {
	b := c.slot(i)
	putHdr(b, typ, 0, 0)
	d, err := c.j.Descriptor().MarshalBinary()
	if err != nil {
		return 0, err
	}
	copy(b[synJetty:], d)
	binary.LittleEndian.PutUint32(b[synToken:], c.token)
	binary.LittleEndian.PutUint32(b[synWindow:], Window)
	r, err := c.ring.Descriptor().MarshalBinary()
	if err != nil {
		return 0, err
	}
	copy(b[synRing:], r)
	binary.LittleEndian.PutUint32(b[synRingSize:], uint32(len(c.ringBuf)))
	return synSize, nil
}

// parseSyn reads a SYN or SYNACK; it rejects what is malformed or out of
// range.
func parseSyn(b []byte) (synInfo, error) {
	var s synInfo
	if len(b) != synSize {
		return s, provider.Errorf(urma.ErrInvalid, "handshake of %d bytes, want %d", len(b), synSize)
	}
	if err := s.desc.UnmarshalBinary(b[synJetty:synToken]); err != nil {
		return s, err
	}
	s.token = binary.LittleEndian.Uint32(b[synToken:])
	s.window = binary.LittleEndian.Uint32(b[synWindow:])
	if s.window == 0 || s.window > Window {
		return s, provider.Errorf(urma.ErrInvalid, "handshake window %d out of range [1,%d]", s.window, Window)
	}
	if err := s.ring.UnmarshalBinary(b[synRing:synRingSize]); err != nil {
		return s, err
	}
	s.ringSize = binary.LittleEndian.Uint32(b[synRingSize:])
	if s.ringSize < minRing || uint64(s.ringSize) > s.ring.Len {
		return s, provider.Errorf(urma.ErrInvalid, "handshake ring of %d bytes in a segment of %d, want at least %d",
			s.ringSize, s.ring.Len, minRing)
	}
	return s, nil
}

// connect imports the peer's Jetty and ring.
func (c *Conn) connect(ctx context.Context, s synInfo) error {
	r, err := jetty.ImportJetty(ctx, c.uctx, s.desc, s.token)
	if err != nil {
		return err
	}
	if err := c.j.Advise(ctx, r); err != nil {
		r.Unimport()
		return err
	}
	t, err := segment.Import(ctx, c.uctx, s.ring, s.token)
	if err != nil {
		r.Unimport()
		return err
	}
	c.mu.Lock()
	c.peer, c.peerRing = r, t
	c.credits, c.peerWindow = int(s.window), int(s.window)
	c.ringAvail, c.peerRingSize = int(s.ringSize), int(s.ringSize)
	c.mu.Unlock()
	return nil
}
