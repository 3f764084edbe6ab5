package jetty

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Receiver is a JFR or a Jetty: what takes receives.
type Receiver interface {
	Recv(buf segment.SGE, userCtx uint64) error
}

// RecvPool keeps a receive queue fed: a segment cut into slots of a fixed
// size, each posted as one receive. A receive record's UserCtx is its
// slot's index; Bytes gives the message it delivered, and Repost posts the
// slot again once the message is consumed. The pool owns the user contexts
// of the receives it posts, so a queue fed by a pool takes no others.
type RecvPool struct {
	seg  *segment.Segment
	r    Receiver
	size uint32
	n    int
}

// NewRecvPool allocates n slots of size bytes and posts each on r, which
// must take n more receives (its depth). When r refuses one, the error is
// returned; receives already posted stay on r until it closes.
func NewRecvPool(uctx *urma.Context, r Receiver, n int, size uint32) (*RecvPool, error) {
	if r == nil || n <= 0 || size == 0 {
		return nil, opErr("create recv pool", provider.Errorf(urma.ErrInvalid, "receiver %v, %d slots of %d bytes", r, n, size))
	}
	seg, err := segment.Alloc(uctx, uint64(n)*uint64(size), segment.Config{Access: segment.LocalOnly})
	if err != nil {
		return nil, err
	}
	p := &RecvPool{seg: seg, r: r, size: size, n: n}
	for i := range n {
		if err := r.Recv(seg.SGE(uint64(i)*uint64(size), size), uint64(i)); err != nil {
			if i == 0 {
				_ = seg.Close()
				return nil, err
			}
			// Receives of the segment are posted: unregistering it
			// now would leave them naming nothing. The context
			// closes it after the queue, as it closes every child.
			return nil, err
		}
	}
	return p, nil
}

// Len is the number of slots.
func (p *RecvPool) Len() int { return p.n }

// SlotSize is the size of each slot in bytes.
func (p *RecvPool) SlotSize() uint32 { return p.size }

// Bytes returns the message the successful receive record cr delivered:
// cr.Len bytes of its slot. They stay valid until the slot is reposted.
func (p *RecvPool) Bytes(cr *CR) ([]byte, error) {
	off, err := p.slot(cr)
	if err != nil {
		return nil, err
	}
	n := min(cr.Len, p.size)
	return p.seg.Bytes()[off : off+uint64(n)], nil
}

// Repost posts the slot of the receive record cr again (a failed record's
// too, but not a flushed one: a queue in ERROR takes no receives).
func (p *RecvPool) Repost(cr *CR) error {
	off, err := p.slot(cr)
	if err != nil {
		return err
	}
	return p.r.Recv(p.seg.SGE(off, p.size), cr.UserCtx)
}

func (p *RecvPool) slot(cr *CR) (uint64, error) {
	if cr == nil || cr.Flags&CRRecv == 0 || cr.UserCtx >= uint64(p.n) {
		return 0, opErr("recv pool", provider.Errorf(urma.ErrInvalid, "not a receive record of this pool: %v", cr))
	}
	return cr.UserCtx * uint64(p.size), nil
}

// Close unregisters the pool's segment. Close the queue first (or take
// every slot's record): a receive still posted names the segment, and a
// message arriving after Close would have nowhere to land.
func (p *RecvPool) Close() error {
	if p == nil {
		return nil
	}
	return p.seg.Close()
}
