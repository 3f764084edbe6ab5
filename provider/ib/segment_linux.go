//go:build cgo && urma_verbs

package ib

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/internal/live"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// tokenInfo is a token id and the segments that use it. explicit ids come
// from AllocTokenID and outlive their segments; the others die with their
// one segment.
type tokenInfo struct {
	segs     map[*segment]struct{}
	explicit bool
}

// segKey names a segment to importers: its token id and address.
type segKey struct {
	tokenID uint32
	va      uint64
}

type segment struct {
	ctx    *ibContext
	mem    []byte
	mapped bool // mem is ours to unmap, a mapping of memfd
	memfd  int
	pin    runtime.Pinner
	mr     *verbs.MR
	desc   provider.SegmentDesc
	token  uint32
	closed atomic.Bool
}

// target is an imported segment: the rkey its owner gave for the token.
type target struct {
	desc   provider.SegmentDesc
	rkey   uint32
	ctx    *ibContext
	closed atomic.Bool
}

func (c *ibContext) AllocTokenID() (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return 0, errClosed("context")
	}
	c.nextTok++
	c.tokens[c.nextTok] = &tokenInfo{segs: map[*segment]struct{}{}, explicit: true}
	return c.nextTok, nil
}

func (c *ibContext) FreeTokenID(id uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return errClosed("context")
	}
	t := c.tokens[id]
	if t == nil || !t.explicit {
		return provider.Errorf(provider.ErrNotFound, "token id %d", id)
	}
	if len(t.segs) > 0 {
		return provider.Errorf(provider.ErrBusy, "token id %d is used by %d segments", id, len(t.segs))
	}
	delete(c.tokens, id)
	return nil
}

// AllocSegment maps memory of a memfd (huge pages when asked and
// available) and registers it. A memfd rather than anonymous memory lets
// another process of the host map the same pages (provider.SharedMemory),
// which test harnesses use to look at a peer's segment.
func (c *ibContext) AllocSegment(size uint64, cfg provider.SegmentConfig) (provider.Segment, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if size == 0 || size > uint64(c.dev.info.Attr.MaxMRSize) || size > 1<<46 {
		return nil, provider.Errorf(provider.ErrInvalid, "segment size %d", size)
	}
	var fd int
	var mem []byte
	var err error
	if cfg.HugePages {
		if fd, mem, err = mapMemfd(size, 2<<20, unix.MFD_HUGETLB); err != nil {
			provider.Logf(provider.LogInfo, "ib: no huge pages for %d bytes (%v), using normal pages", size, err)
		}
	}
	if mem == nil {
		if fd, mem, err = mapMemfd(size, uint64(unix.Getpagesize()), 0); err != nil {
			return nil, provider.Errorf(provider.ErrNoMemory, "%v", err)
		}
	}
	s, err := c.addSegment(mem[:size:len(mem)], fd, cfg)
	if err != nil {
		_ = unix.Munmap(mem)
		_ = unix.Close(fd)
		return nil, err
	}
	return s, nil
}

// mapMemfd creates a memfd of size rounded up to page and maps it shared.
func mapMemfd(size, page uint64, flags int) (int, []byte, error) {
	n := (size + page - 1) / page * page
	fd, err := unix.MemfdCreate("urma-ib-segment", unix.MFD_CLOEXEC|flags)
	if err != nil {
		return -1, nil, fmt.Errorf("memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(n)); err != nil {
		_ = unix.Close(fd)
		return -1, nil, fmt.Errorf("ftruncate memfd to %d: %w", n, err)
	}
	mem, err := unix.Mmap(fd, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Close(fd)
		return -1, nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	return fd, mem, nil
}

// MemFD implements provider.SharedMemory for allocated segments.
func (s *segment) MemFD() (int, int64, bool) {
	if !s.mapped || s.closed.Load() {
		return -1, 0, false
	}
	return s.memfd, 0, true
}

// RegisterSegment registers caller memory. Go memory is pinned for the
// life of the segment, so the collector neither moves nor frees it while
// the device may access it.
func (c *ibContext) RegisterSegment(buf []byte, cfg provider.SegmentConfig) (provider.Segment, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "empty buffer")
	}
	return c.addSegment(buf, -1, cfg)
}

func mrAccess(a provider.Access) int {
	// Local write is always granted: a segment is also where READs and
	// receives land.
	f := verbs.AccessLocalWrite
	if a&provider.AccessRead != 0 {
		f |= verbs.AccessRemoteRead
	}
	if a&provider.AccessWrite != 0 {
		f |= verbs.AccessRemoteWrite
	}
	if a&provider.AccessAtomic != 0 {
		f |= verbs.AccessRemoteAtomic
	}
	return f
}

// addSegment registers mem: caller memory when memfd is -1, else a
// mapping of memfd the segment owns.
func (c *ibContext) addSegment(mem []byte, memfd int, cfg provider.SegmentConfig) (*segment, error) {
	mapped := memfd >= 0
	if err := cfg.Access.Validate(); err != nil {
		return nil, err
	}
	if cfg.TokenPolicy > provider.TokenPlainText {
		return nil, provider.Errorf(provider.ErrNotSupported, "token policy %v", cfg.TokenPolicy)
	}
	s := &segment{ctx: c, mem: mem, mapped: mapped, memfd: memfd, token: cfg.Token}
	p := unsafe.Pointer(unsafe.SliceData(mem))
	if !mapped {
		s.pin.Pin(p)
	}
	mr, err := c.vc.RegMR(p, uintptr(len(mem)), mrAccess(cfg.Access))
	if err != nil {
		s.pin.Unpin()
		return nil, verbsErr("ibv_reg_mr", err)
	}
	s.mr = mr
	c.mu.Lock()
	defer c.mu.Unlock()
	fail := func(err error) (*segment, error) {
		_ = mr.Dereg()
		s.pin.Unpin()
		return nil, err
	}
	if c.closed.Load() {
		return fail(errClosed("context"))
	}
	tok := cfg.TokenID
	if tok == 0 {
		c.nextTok++
		tok = c.nextTok
		c.tokens[tok] = &tokenInfo{segs: map[*segment]struct{}{}}
	}
	ti := c.tokens[tok]
	if ti == nil {
		return fail(provider.Errorf(provider.ErrClosed, "token id %d is not allocated", tok))
	}
	ti.segs[s] = struct{}{}
	s.desc = provider.SegmentDesc{EID: c.eid.eid, UASID: c.uasid, VA: uint64(uintptr(p)), Len: uint64(len(mem)),
		Access: cfg.Access, TokenPolicy: cfg.TokenPolicy, TokenID: tok}
	c.segs[segKey{tok, s.desc.VA}] = s
	c.objects.Add(s, s.rank())
	live.Objects(1)
	return s, nil
}

func (s *segment) Desc() provider.SegmentDesc { return s.desc }
func (s *segment) Bytes() []byte              { return s.mem }
func (s *segment) rank() int                  { return 4 }
func (s *segment) forceClose() error          { return s.close() }

// Close deregisters the memory: later accesses through imports fail with a
// remote access error, as the verbs do for a destroyed key.
func (s *segment) Close() error {
	s.ctx.closeMu.RLock()
	defer s.ctx.closeMu.RUnlock()
	return s.close()
}

func (s *segment) close() error {
	if s.closed.Swap(true) {
		return nil
	}
	c := s.ctx
	c.mu.Lock()
	delete(c.segs, segKey{s.desc.TokenID, s.desc.VA})
	if ti := c.tokens[s.desc.TokenID]; ti != nil {
		delete(ti.segs, s)
		if !ti.explicit && len(ti.segs) == 0 {
			delete(c.tokens, s.desc.TokenID)
		}
	}
	if c.objects.Remove(s) {
		live.Objects(-1)
	}
	c.mu.Unlock()
	err := s.mr.Dereg()
	s.pin.Unpin()
	if s.mapped {
		_ = unix.Munmap(s.mem[:cap(s.mem)])
		_ = unix.Close(s.memfd)
	}
	s.mem = nil
	if err != nil {
		return verbsErr("deregister segment", err)
	}
	return nil
}

// lkey checks that m is a live segment of this context.
func (c *ibContext) localSeg(m provider.MemRef) (*segment, error) {
	s, ok := m.(*segment)
	if !ok || s == nil || s.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "local sge names memory that is not a segment of this context")
	}
	if s.closed.Load() {
		return nil, errClosed("local segment")
	}
	return s, nil
}

// ImportSegment asks the owner, through its listener, to check the
// descriptor and token; the answer carries the key for one-sided access.
func (c *ibContext) ImportSegment(ctx context.Context, desc provider.SegmentDesc, token uint32) (provider.Target, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	req := request{op: opImportSegment, target: desc.TokenID, token: token, access: desc.Access,
		policy: desc.TokenPolicy, srcUASID: c.uasid, va: desc.VA, len: desc.Len}
	d, err := c.dial(ctx, desc.EID, desc.UASID, req, c.probeQP)
	if err != nil {
		return nil, err
	}
	if err := d.reply.err("segment import"); err != nil {
		return nil, err
	}
	t := &target{desc: desc, rkey: d.reply.rkey, ctx: c}
	c.track(t)
	return t, nil
}

// probeQP is the QP an import's connect request needs (iWARP connects a
// QP even when the answer is a reject); it never carries data.
func (c *ibContext) probeQP(id verbs.CMID) (*verbs.QP, error) {
	qp, err := id.CreateQP(c.vc, c.ctl, c.ctl, nil, verbs.QPCaps{MaxSendWR: 1, MaxSendSGE: 1, MaxRecvWR: 1})
	if err != nil {
		return nil, verbsErr("create QP", err)
	}
	return qp, nil
}

func (c *ibContext) answerSegmentImport(r request) (reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.segs[segKey{r.target, r.va}]
	if s == nil || s.closed.Load() {
		return reply{}, provider.Errorf(provider.ErrNotFound, "no segment with token id %d at va %#x", r.target, r.va)
	}
	d := s.desc
	if d.Len != r.len || d.Access != r.access || d.TokenPolicy != r.policy {
		return reply{}, provider.Errorf(provider.ErrInvalid, "descriptor does not match the segment")
	}
	if d.TokenPolicy != provider.TokenNone && s.token != r.token {
		return reply{}, provider.Errorf(provider.ErrPermission, "wrong token for segment token id %d", r.target)
	}
	if d.Access == provider.AccessLocalOnly {
		// No remote right, so nothing to hand out.
		return reply{}, provider.Errorf(provider.ErrPermission, "segment %v is LOCAL_ONLY: it cannot be imported", d)
	}
	return reply{rkey: s.mr.RKey}, nil
}

func (t *target) Desc() provider.SegmentDesc { return t.desc }
func (t *target) rank() int                  { return 4 }
func (t *target) forceClose() error          { return t.close() }

func (t *target) Close() error {
	t.ctx.closeMu.RLock()
	defer t.ctx.closeMu.RUnlock()
	return t.close()
}

func (t *target) close() error {
	if t.closed.Swap(true) {
		return errClosed("target")
	}
	t.ctx.untrack(t)
	return nil
}
