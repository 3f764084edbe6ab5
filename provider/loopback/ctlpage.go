package loopback

import (
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// segEntry is a segment's record in its context's page, a memfd that peer
// processes map read-only: it tells an importer in any process whether the
// segment is still registered. Only the owner writes it.
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

// ctlPageSize is the size of a context's page: one entry per handle.
const ctlPageSize = maxSegments * uint64(unsafe.Sizeof(segEntry{}))

// ctlPage is the shared page of a context, as its owner or a peer maps it.
// Imports by other contexts of the owner's process point into the owner's
// own mapping, so it is reference counted: the owner holds one reference,
// and each importing context of the process one until it closes.
type ctlPage struct {
	m    *shm.Mapping
	refs atomic.Int32
}

func newCtlPage() (*ctlPage, error) {
	m, err := shm.NewMapping("ctx", ctlPageSize, false)
	if err != nil {
		return nil, err
	}
	p := &ctlPage{m: m}
	p.refs.Store(1)
	return p, nil
}

// attachCtlPage maps a peer's page for reading: whatever the peer sent, this
// process never writes it.
func attachCtlPage(fd int) (*ctlPage, error) {
	m, err := shm.AttachReadOnly(fd, ctlPageSize)
	if err != nil {
		return nil, err
	}
	p := &ctlPage{m: m}
	p.refs.Store(1)
	return p, nil
}

func (p *ctlPage) release() {
	if p.refs.Add(-1) == 0 {
		p.m.Close()
	}
}

func (p *ctlPage) entry(h uint32) *segEntry {
	return (*segEntry)(unsafe.Pointer(&p.m.Bytes()[uint64(h)*uint64(unsafe.Sizeof(segEntry{}))]))
}

// countPage holds one importer's accesses in flight to the owner's caller
// memory, one int32 per segment handle: the importer counts each access
// that reaches the owner's address space (process_vm_*) up and down, and
// the owner's Unregister waits for the count. Each connection has a page
// of its own, so that what one peer writes there is its own business: a
// count it never brings down holds up only the segments it imported, and
// only once (see ctlServer.drain). A count sharing a cache line with the
// entries would also take that line from every importer checking a
// segment on another core.
type countPage struct{ m *shm.Mapping }

const countPageSize = maxSegments * 4

func newCountPage() (*countPage, error) {
	m, err := shm.NewMapping("counts", countPageSize, false)
	if err != nil {
		return nil, err
	}
	return &countPage{m: m}, nil
}

func attachCountPage(fd int) (*countPage, error) {
	m, err := shm.AttachMapping(fd, countPageSize)
	if err != nil {
		return nil, err
	}
	return &countPage{m: m}, nil
}

// count is the access count of handle h.
func (p *countPage) count(h uint32) *atomic.Int32 {
	return (*atomic.Int32)(unsafe.Pointer(&p.m.Bytes()[uint64(h)*4]))
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
