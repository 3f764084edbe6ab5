package loopback

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// segment is registered memory. Accesses from any goroutine or process take
// a memRef; Close marks the shared entry dead and waits for the accesses
// that use this memory before it is unmapped or handed back to the caller.
type segment struct {
	ctx      *lbContext
	desc     provider.SegmentDesc
	mem      []byte
	m        *shm.Mapping // nil for caller memory
	token    uint32
	handle   uint32
	ownToken bool
	ref      memRef // the owner's own view, shared by in-process imports
	closed   atomic.Bool
	// recvOf are the receive queues the segment was posted to as a
	// buffer (copied on write under recvMu): a peer that imported one of
	// them may ask for the segment's memory to deliver its SENDs.
	recvOf atomic.Pointer[[]uint32]
	recvMu sync.Mutex
	// recvLast is 1 + a queue in recvOf, the last noted, which most posts
	// repeat: it sits with the fields a post reads anyway.
	recvLast atomic.Uint32
}

// noteReceive records that s is posted as a receive buffer of queue id.
// A post to the queue last noted costs one load.
func (s *segment) noteReceive(id uint32) {
	if s.recvLast.Load() != id+1 {
		s.addReceiveOf(id)
	}
}

func (s *segment) addReceiveOf(id uint32) {
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	var ids []uint32
	if p := s.recvOf.Load(); p != nil {
		ids = *p
	}
	if !slices.Contains(ids, id) {
		ids = append(slices.Clip(ids), id)
		s.recvOf.Store(&ids)
	}
	// Only once id is in recvOf: a post that finds recvLast set may
	// publish its receive at once.
	s.recvLast.Store(id + 1)
}

// receiveOfAny reports whether s was posted as a receive buffer of one of
// the queues rqs.
func (s *segment) receiveOfAny(rqs map[uint32]struct{}) bool {
	p := s.recvOf.Load()
	if p == nil {
		return false
	}
	for _, id := range *p {
		if _, ok := rqs[id]; ok {
			return true
		}
	}
	return false
}

func (c *lbContext) AllocSegment(size uint64, cfg provider.SegmentConfig) (provider.Segment, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if size > maxSegment {
		// A size no allocation can have is a bad argument, as a depth
		// above the device's is; ErrNoMemory is for memory running out.
		return nil, provider.Errorf(provider.ErrInvalid, "segment of %d bytes is larger than the loopback limit %d", size, uint64(maxSegment))
	}
	m, err := shm.NewMapping("seg", size, cfg.HugePages)
	if err != nil {
		return nil, err
	}
	s, err := c.addSegment(m.Bytes()[:size], m, cfg)
	if err != nil {
		m.Close()
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

func (c *lbContext) addSegment(mem []byte, m *shm.Mapping, cfg provider.SegmentConfig) (*segment, error) {
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
	h, err := c.hnd.alloc()
	if err != nil {
		if s.ownToken {
			delete(c.tokens, tok)
		}
		return nil, err
	}
	ti.segs = append(ti.segs, s)
	s.handle = h
	s.desc = provider.SegmentDesc{EID: c.eid, UASID: c.uasid, VA: uint64(uintptr(unsafe.Pointer(&mem[0]))),
		Len: uint64(len(mem)), Access: cfg.Access, TokenPolicy: cfg.TokenPolicy, TokenID: tok}
	ent := c.page.entry(h)
	gen := ent.gen.Add(1)
	ent.state.Store(segLive)
	// Accesses from this process are not counted: destroy waits them out
	// through the queue locks (see quiesce.go).
	s.ref = memRef{ent: ent, gen: gen, va: s.desc.VA, len: s.desc.Len, access: cfg.Access, mem: mem}
	var old []*segment
	if p := c.segs.Load(); p != nil {
		old = *p
	}
	tab := make([]*segment, max(len(old), int(h)+1))
	copy(tab, old)
	tab[h] = s
	c.segs.Store(&tab)
	c.children.Add(s, s.rank())
	return s, nil
}

// segByHandle finds a live segment of this context by the handle and
// generation a receive request recorded.
func (c *lbContext) segByHandle(h, gen uint32) *segment {
	p := c.segs.Load()
	if p == nil || int(h) >= len(*p) {
		return nil
	}
	s := (*p)[h]
	if s == nil || s.ref.gen != gen {
		return nil
	}
	return s
}

func (s *segment) Desc() provider.SegmentDesc { return s.desc }
func (s *segment) Bytes() []byte {
	if s.closed.Load() {
		return nil
	}
	return s.mem
}

// MemFD implements provider.SharedMemory for allocated segments.
func (s *segment) MemFD() (int, int64, bool) {
	if s.m == nil || s.closed.Load() {
		return -1, 0, false
	}
	return s.m.FD(), 0, true
}

func (s *segment) Close() error {
	s.ctx.closeMu.RLock()
	defer s.ctx.closeMu.RUnlock()
	if s.closed.Load() {
		return errClosed("segment")
	}
	s.ctx.disown(s)
	s.destroy()
	return nil
}

// drainTimeout bounds how long Unregister waits for accesses from other
// processes (a stopped peer could hold one for ever); after it the memory is
// quarantined instead of reused.
const drainTimeout = time.Second

func (s *segment) rank() int { return objtab.RankMemory }

func (s *segment) destroy() {
	if s.closed.Swap(true) {
		return
	}
	s.ref.ent.state.Store(segDead)
	quiesceProcess()
	c := s.ctx
	var stuck []*ctlConn
	if s.m == nil && c.srv != nil {
		// Only caller memory is reached in this process's address space
		// by others, and counted.
		stuck = c.srv.drain(s)
	}
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
	if len(stuck) == 0 {
		c.hnd.put(s.handle)
	}
	c.mu.Unlock()
	if len(stuck) > 0 {
		quarantine(s, stuck)
		return
	}
	s.m.Close()
}

// quarantined holds caller memory that a peer process may still be
// accessing (it stopped inside an access, or left its count up): the
// memory stays referenced, so the garbage collector does not reuse it, and
// its handle is not reused, so a late access cannot land in memory that has
// a new owner. An entry goes when every connection it waits for has ended:
// their peers can no longer reach the memory through this context.
var quarantined struct {
	mu      sync.Mutex
	entries map[*segment]map[*ctlConn]struct{}
}

func quarantine(s *segment, conns []*ctlConn) {
	pids := make([]int32, len(conns))
	waiting := map[*ctlConn]struct{}{}
	for i, cc := range conns {
		pids[i] = cc.pid
		waiting[cc] = struct{}{}
	}
	provider.Logf(provider.LogWarning, "loopback: segment %v still accessed by peer process %v after %v; its memory is kept until they disconnect", s.desc, pids, drainTimeout)
	quarantined.mu.Lock()
	if quarantined.entries == nil {
		quarantined.entries = map[*segment]map[*ctlConn]struct{}{}
	}
	quarantined.entries[s] = waiting
	quarantined.mu.Unlock()
}

// unquarantine lets go of the memory that waited for cc alone, now that
// its connection has ended.
func unquarantine(cc *ctlConn) {
	var freed []*segment
	quarantined.mu.Lock()
	for s, waiting := range quarantined.entries {
		if _, ok := waiting[cc]; !ok {
			continue
		}
		delete(waiting, cc)
		if len(waiting) == 0 {
			delete(quarantined.entries, s)
			freed = append(freed, s)
		}
	}
	quarantined.mu.Unlock()
	for _, s := range freed {
		provider.Logf(provider.LogInfo, "loopback: segment %v leaves quarantine: the peers that held it are gone", s.desc)
		c := s.ctx
		c.mu.Lock()
		if !c.closed.Load() {
			c.hnd.put(s.handle)
		}
		c.mu.Unlock()
	}
}

// target is an imported segment: a memRef to the owner's memory, mapped into
// this process when the owner is another process (ref.peer says which).
type target struct {
	ctx    *lbContext // the importer
	desc   provider.SegmentDesc
	ref    memRef
	closed atomic.Bool

	// For mapped imports (mapped.go): the owner's segment when it is in
	// this process, and the token the import presented, which the owner
	// checks again before it hands out a mapping (and before it
	// invalidates the segment for a SEND_INVALIDATE, see
	// invalidateRemote).
	seg   *segment
	token uint32
}

func (c *lbContext) ImportSegment(ctx context.Context, desc provider.SegmentDesc, token uint32) (provider.Target, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := provider.ContextErr(ctx); err != nil {
		return nil, err
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	if owner := fabricFind(desc.EID, desc.UASID); owner != nil {
		seg, err := c.importLocal(owner, desc, token)
		if err != nil {
			return nil, err
		}
		return &target{ctx: c, desc: desc, ref: seg.ref, seg: seg, token: token}, nil
	}
	p, err := c.peer(ctx, desc.EID, desc.UASID)
	if err != nil {
		return nil, err
	}
	ref, err := p.importSegment(ctx, desc, token)
	if err != nil {
		return nil, err
	}
	return &target{ctx: c, desc: desc, ref: ref, token: token}, nil
}

// importLocal finds a segment of owner, a context of this process, and
// keeps owner's page mapped until c closes: the import's memRef points into
// it, and a request may use the import until then.
func (c *lbContext) importLocal(owner *lbContext, desc provider.SegmentDesc, token uint32) (*segment, error) {
	owner.mu.Lock()
	if owner.closed.Load() {
		owner.mu.Unlock()
		return nil, provider.Errorf(provider.ErrNotFound, "no context at eid %v uasid %d", desc.EID, desc.UASID)
	}
	seg, err := owner.findSegmentLocked(desc, token)
	if err == nil {
		owner.page.refs.Add(1)
	}
	owner.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	_, had := c.pages[owner.page]
	keep := !had && !c.closed.Load()
	if keep {
		c.pages[owner.page] = struct{}{}
	}
	c.mu.Unlock()
	if !keep {
		owner.page.release() // c holds one already, or is closing
	}
	return seg, nil
}

func (c *lbContext) findSegmentLocked(desc provider.SegmentDesc, token uint32) (*segment, error) {
	var seg *segment
	if ti := c.tokens[desc.TokenID]; ti != nil {
		for _, s := range ti.segs {
			if s.desc.VA == desc.VA {
				seg = s
				break
			}
		}
	}
	if seg == nil || seg.closed.Load() {
		return nil, provider.Errorf(provider.ErrNotFound, "no segment with token id %d at va %#x", desc.TokenID, desc.VA)
	}
	if seg.desc != desc {
		return nil, provider.Errorf(provider.ErrInvalid, "descriptor does not match the segment (%v)", seg.desc)
	}
	if seg.desc.TokenPolicy != provider.TokenNone && seg.token != token {
		return nil, provider.Errorf(provider.ErrPermission, "wrong token for segment token id %d", desc.TokenID)
	}
	if seg.desc.Access&remoteAccess == 0 {
		return nil, provider.Errorf(provider.ErrPermission, "segment %v is LOCAL_ONLY: it cannot be imported", seg.desc)
	}
	return seg, nil
}

func (t *target) Desc() provider.SegmentDesc { return t.desc }

func (t *target) Close() error {
	if t.closed.Swap(true) {
		return errClosed("target")
	}
	return nil
}
