package loopback

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// segment is registered memory. Accesses from any goroutine go through
// acquire/release so that Close never unmaps memory under a running copy.
type segment struct {
	ctx      *lbContext
	desc     provider.SegmentDesc
	mem      []byte
	m        *mapping // nil for caller memory
	token    uint32
	handle   uint32
	ownToken bool
	inflight atomic.Int64
	closed   atomic.Bool
}

func (c *lbContext) AllocSegment(size uint64, cfg provider.SegmentConfig) (provider.Segment, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if size > maxMsgSize*16 {
		return nil, provider.Errorf(provider.ErrNoMemory, "segment of %d bytes is larger than the loopback limit", size)
	}
	m, err := newMapping("seg", size, cfg.HugePages)
	if err != nil {
		return nil, err
	}
	s, err := c.addSegment(m.mem[:size], m, cfg)
	if err != nil {
		m.close()
		return nil, err
	}
	return s, nil
}

func (c *lbContext) RegisterSegment(buf []byte, cfg provider.SegmentConfig) (provider.Segment, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "empty buffer")
	}
	return c.addSegment(buf, nil, cfg)
}

func (c *lbContext) addSegment(mem []byte, m *mapping, cfg provider.SegmentConfig) (*segment, error) {
	if err := cfg.Access.Validate(); err != nil {
		return nil, err
	}
	if cfg.TokenPolicy > provider.TokenPlainText {
		return nil, provider.Errorf(provider.ErrNotSupported, "token policy %v", cfg.TokenPolicy)
	}
	s := &segment{ctx: c, mem: mem, m: m, token: cfg.Token}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return nil, errClosed("context")
	}
	tok := cfg.TokenID
	if tok == 0 {
		c.nextTok++
		tok = c.nextTok
		c.tokens[tok] = &tokenInfo{}
		s.ownToken = true
	}
	ti := c.tokens[tok]
	if ti == nil {
		return nil, provider.Errorf(provider.ErrNotFound, "token id %d", tok)
	}
	ti.segs = append(ti.segs, s)
	s.desc = provider.SegmentDesc{EID: c.eid, UASID: c.uasid, VA: uint64(uintptr(unsafe.Pointer(&mem[0]))),
		Len: uint64(len(mem)), Access: cfg.Access, TokenPolicy: cfg.TokenPolicy, TokenID: tok}
	var old []*segment
	if p := c.segs.Load(); p != nil {
		old = *p
	}
	tab := append(append(make([]*segment, 0, len(old)+1), old...), s)
	s.handle = uint32(len(tab) - 1)
	c.segs.Store(&tab)
	c.children = append(c.children, s)
	return s, nil
}

func (c *lbContext) segByHandle(h uint32) *segment {
	p := c.segs.Load()
	if p == nil || int(h) >= len(*p) {
		return nil
	}
	return (*p)[h]
}

func (s *segment) Desc() provider.SegmentDesc { return s.desc }
func (s *segment) Bytes() []byte {
	if s.closed.Load() {
		return nil
	}
	return s.mem
}

func (s *segment) acquire() bool {
	s.inflight.Add(1)
	if s.closed.Load() {
		s.inflight.Add(-1)
		return false
	}
	return true
}

func (s *segment) release() { s.inflight.Add(-1) }

// span returns the bytes [addr, addr+n) if they lie inside the segment.
func (s *segment) span(addr uint64, n uint32) ([]byte, bool) {
	off := addr - s.desc.VA
	if addr < s.desc.VA || off > s.desc.Len || uint64(n) > s.desc.Len-off {
		return nil, false
	}
	return s.mem[off : off+uint64(n)], true
}

func (s *segment) Close() error {
	if s.closed.Load() {
		return errClosed("segment")
	}
	s.ctx.disown(s)
	s.destroy()
	return nil
}

func (s *segment) destroy() {
	if s.closed.Swap(true) {
		return
	}
	for s.inflight.Load() != 0 {
		runtime.Gosched()
	}
	c := s.ctx
	c.mu.Lock()
	if ti := c.tokens[s.desc.TokenID]; ti != nil {
		for i, x := range ti.segs {
			if x == s {
				ti.segs = append(ti.segs[:i], ti.segs[i+1:]...)
				break
			}
		}
		if s.ownToken {
			delete(c.tokens, s.desc.TokenID)
		}
	}
	if p := c.segs.Load(); p != nil {
		tab := append([]*segment(nil), *p...)
		tab[s.handle] = nil
		c.segs.Store(&tab)
	}
	c.mu.Unlock()
	s.m.close()
}

// target is an imported segment. In one process it points at the segment
// itself; access rights and liveness are checked on every access.
type target struct {
	desc   provider.SegmentDesc
	seg    *segment
	closed atomic.Bool
}

func (c *lbContext) ImportSegment(desc provider.SegmentDesc, token uint32) (provider.Target, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	owner, err := fabricFind(desc.EID, desc.UASID)
	if err != nil {
		return nil, err
	}
	owner.mu.Lock()
	var seg *segment
	if ti := owner.tokens[desc.TokenID]; ti != nil {
		for _, s := range ti.segs {
			if s.desc.VA == desc.VA {
				seg = s
				break
			}
		}
	}
	owner.mu.Unlock()
	if seg == nil || seg.closed.Load() {
		return nil, provider.Errorf(provider.ErrNotFound, "no segment with token id %d at va %#x", desc.TokenID, desc.VA)
	}
	if seg.desc != desc {
		return nil, provider.Errorf(provider.ErrInvalid, "descriptor does not match the segment (%v)", seg.desc)
	}
	if seg.desc.TokenPolicy != provider.TokenNone && seg.token != token {
		return nil, provider.Errorf(provider.ErrPermission, "wrong token for segment token id %d", desc.TokenID)
	}
	return &target{desc: desc, seg: seg}, nil
}

func (t *target) Desc() provider.SegmentDesc { return t.desc }

func (t *target) Close() error {
	if t.closed.Swap(true) {
		return errClosed("target")
	}
	return nil
}

// MemFD implements provider.SharedMemory for allocated segments.
func (s *segment) MemFD() (int, int64, bool) {
	if s.m == nil || s.closed.Load() {
		return -1, 0, false
	}
	return s.m.fd, 0, true
}
