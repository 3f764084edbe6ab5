package loopback

import (
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// segEntry is a segment's record in its context's page, a memfd that peer
// processes map: it tells an importer in any process whether the segment is
// still registered. The accesses of other processes that use the owner's
// own memory (process_vm_readv/writev into caller memory) are counted apart,
// in the page's second half (ctlPage.inflight), so that Unregister can wait
// for them before the memory is reused: every such access writes its count
// twice, and a count sharing a cache line with the entries would take that
// line from every importer checking a segment on another core. Accesses of
// the owner's process are not counted (see quiesce.go).
type segEntry struct {
	state atomic.Uint32
	gen   atomic.Uint32
}

// Segment states in a segEntry.
const (
	segFree uint32 = iota
	segLive
	segDead
)

// maxSegments bounds the segments of one context: the page has one entry per
// handle. The memfd is sparse, so unused entries cost no memory.
const maxSegments = 1 << 16

// The page: the entries, then the access counts, one int32 per handle.
const (
	ctlEntries  = maxSegments * uint64(unsafe.Sizeof(segEntry{}))
	ctlPageSize = ctlEntries + maxSegments*4
)

// ctlPage is the shared page of a context, as its owner or a peer maps it.
// Imports by other contexts of the owner's process point into the owner's
// own mapping, so it is reference counted: the owner holds one reference,
// and each importing context of the process one until it closes.
type ctlPage struct {
	m    *mapping
	refs atomic.Int32
}

func newCtlPage() (*ctlPage, error) {
	m, err := newMapping("ctx", ctlPageSize, false)
	if err != nil {
		return nil, err
	}
	p := &ctlPage{m: m}
	p.refs.Store(1)
	return p, nil
}

func attachCtlPage(fd int) (*ctlPage, error) {
	m, err := attachMapping(fd, ctlPageSize)
	if err != nil {
		return nil, err
	}
	p := &ctlPage{m: m}
	p.refs.Store(1)
	return p, nil
}

func (p *ctlPage) release() {
	if p.refs.Add(-1) == 0 {
		p.m.close()
	}
}

func (p *ctlPage) entry(h uint32) *segEntry {
	return (*segEntry)(unsafe.Pointer(&p.m.mem[uint64(h)*uint64(unsafe.Sizeof(segEntry{}))]))
}

// inflight is the access count of handle h.
func (p *ctlPage) inflight(h uint32) *atomic.Int32 {
	return (*atomic.Int32)(unsafe.Pointer(&p.m.mem[ctlEntries+uint64(h)*4]))
}

// handles allocates segment handles, reusing freed ones with a new
// generation so that a stale reference (a posted receive, an old import)
// never reaches the segment that took the handle over.
type handles struct {
	next uint32
	free []uint32
}

func (h *handles) alloc() (uint32, error) {
	if n := len(h.free); n > 0 {
		v := h.free[n-1]
		h.free = h.free[:n-1]
		return v, nil
	}
	if h.next >= maxSegments {
		return 0, provider.Errorf(provider.ErrNoMemory, "context has %d segments, the loopback limit", maxSegments)
	}
	h.next++
	return h.next - 1, nil
}

func (h *handles) put(v uint32) { h.free = append(h.free, v) }
