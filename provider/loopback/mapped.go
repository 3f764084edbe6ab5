package loopback

import (
	"context"
	"errors"
	"sync"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// mapped is an imported segment's memfd mapped into the importer, apart
// from the mappings requests use: unmapping it touches nothing else.
type mapped struct {
	m    *shm.Mapping
	b    []byte
	once sync.Once
}

func (m *mapped) Bytes() []byte { return m.b }

func (m *mapped) Close() error {
	m.once.Do(m.m.Close)
	return nil
}

// MapTarget implements provider.TargetMapper. The owner hands out the
// memfd only after checking the import's token and rights again, and a
// grant without WRITE comes as a read-only descriptor that the kernel
// refuses to map writable.
func (t *target) MapTarget(ctx context.Context, write bool) (provider.MappedMemory, error) {
	if t.closed.Load() {
		return nil, errClosed("target")
	}
	if err := t.ctx.check(); err != nil {
		return nil, err
	}
	if err := provider.ContextErr(ctx); err != nil {
		return nil, err
	}
	if write && t.desc.Access&provider.AccessWrite == 0 {
		return nil, provider.Errorf(provider.ErrPermission, "segment %v grants no WRITE: map it for reading only", t.desc)
	}
	var (
		fd   int
		size uint64
		err  error
	)
	if t.seg != nil {
		fd, size, err = t.seg.mapFD(write)
	} else {
		fd, size, err = t.ref.peer.mapFD(ctx, t, write)
	}
	if err != nil {
		return nil, err
	}
	var m *shm.Mapping
	if write {
		m, err = shm.AttachMapping(fd, size)
	} else {
		m, err = shm.AttachReadOnly(fd, size)
	}
	if err != nil {
		return nil, err
	}
	return &mapped{m: m, b: m.Bytes()[:t.desc.Len:t.desc.Len]}, nil
}

func errCallerMemory(d provider.SegmentDesc) error {
	return provider.Errorf(provider.ErrNotSupported, "segment %v is caller memory (registered from the owner's heap), which cannot be mapped into another address space: the owner must allocate it with AllocSegment (segment.Alloc) instead", d)
}

func errUnregistered(d provider.SegmentDesc) error {
	return provider.Errorf(provider.ErrNotFound, "segment %v was unregistered by its owner", d)
}

// mapFD is a descriptor of s's memfd for an importer in this process,
// writable only when write. It is taken under the owner's lock, which
// destroy passes before it closes the memfd.
func (s *segment) mapFD(write bool) (int, uint64, error) {
	c := s.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.closed.Load() {
		return -1, 0, errUnregistered(s.desc)
	}
	if s.m == nil {
		return -1, 0, errCallerMemory(s.desc)
	}
	fd, err := shareFD(s.m.FD(), write)
	if err != nil {
		return -1, 0, err
	}
	return fd, uint64(len(s.m.Bytes())), nil
}

// mapFD asks the owner for t's memfd, presenting the import's token as an
// import does: the owner checks it, and the segment's rights decide
// whether the descriptor it sends is writable.
func (p *peerConn) mapFD(ctx context.Context, t *target, write bool) (int, uint64, error) {
	b, _ := t.desc.MarshalBinary()
	m, err := p.rpc(ctx, wire.ImportSeg, (&wire.Buf{Bytes: b}).U32(t.token).Bytes, 0)
	if err != nil {
		if errors.Is(err, provider.ErrNotFound) {
			return -1, 0, errUnregistered(t.desc)
		}
		return -1, 0, err
	}
	r, ok := wire.DecodeSegReply(m.Payload)
	if ok && r.Caller && len(m.FDs) == 0 {
		return -1, 0, errCallerMemory(t.desc)
	}
	if !ok || r.Handle >= maxSegments || len(m.FDs) != 1 || r.Size < r.Len || r.Len != t.desc.Len || r.VA != t.desc.VA {
		m.CloseFDs()
		return -1, 0, provider.Errorf(provider.ErrFail, "peer %d sent a malformed segment reply", p.pid)
	}
	if r.Gen != t.ref.gen || p.page.entry(r.Handle) != t.ref.ent {
		// The owner unregistered the imported segment and registered
		// another one under the same descriptor.
		m.CloseFDs()
		return -1, 0, errUnregistered(t.desc)
	}
	return m.FDs[0], r.Size, nil
}
