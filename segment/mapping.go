package segment

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Mapping is an imported segment's memory mapped into this process, so
// that it loads and stores the owner's memory directly instead of posting
// READs and WRITEs: UMDK's urma_import_seg with the mapping flag, which
// UnifiedBus offers and verbs devices do not (urma.DeviceAttr.MapImports).
// Target.Map makes one.
//
// A mapping has exactly the access it was made with, never more than the
// owner granted: a READ mapping is mapped by the kernel for reading only,
// and is reached through ReadAt and LoadUint64, never through a slice, so
// that no store from this process can reach it (a store through a slice
// over read-only memory would crash the whole process). A READ|WRITE
// mapping also gives its memory as a []byte (Bytes), and WriteAt and
// StoreUint64.
//
// # Consistency with URMA operations
//
// The mapping is the owner's memory itself, not a copy: the owner's
// stores, WRITEs and atomics from any initiator, and this process's
// stores through the mapping all reach the same pages. What holds:
//
//   - An aligned 8-byte word read with LoadUint64 (or sync/atomic on
//     Bytes) is never torn, and an atomic operation on it from this
//     process (sync/atomic on Bytes) is atomic with respect to the URMA
//     atomics (CompareSwap, FetchAdd ...) of the loopback provider on the
//     same word, which are CPU atomics on the same memory.
//   - A WRITE or atomic whose completion record an initiator has polled
//     is visible to loads made after the initiator tells this process so
//     (through a message, or a word the process reads with an atomic
//     load); a load racing a WRITE in flight may see any mix of old and
//     new bytes, as a WRITE copies bytes in no defined order.
//   - Plain loads and stores (copy, ReadAt, WriteAt) are not atomic
//     beyond what the CPU gives for aligned words.
//
// The race detector does not see accesses made by other processes, nor
// the SDK's atomics in shared memory: synchronize through URMA
// completions or messages, or through atomic words, as with any shared
// memory.
//
// # Life cycle
//
// Unmap (or Close, or the Target's Unimport) unmaps the memory. After it
// every method returns an error matching net.ErrClosed (urma.ErrClosed)
// and touches nothing. A slice from Bytes must not be used after Unmap,
// as with syscall.Munmap: the address range may be gone (a fault that
// ends the process) or reused for other memory. Unmap waits for the
// mapping's own methods running in other goroutines, never for users of
// that slice.
//
// When the owner unregisters the segment, closes its context or its
// process ends, the mapping stays valid memory (no fault, no SIGBUS):
// loads see the last values written, and stores reach nobody the owner
// knows. The memory stays until Unmap; an owner never reuses it for other
// data, as every allocated segment has memory of its own.
type Mapping struct {
	mu     sync.RWMutex
	p      provider.MappedMemory
	mem    []byte // nil once unmapped
	n      int
	access Access
	t      *Target
}

// Map maps the target's memory into this process with access: Read for a
// read-only mapping, Read|Write (Atomic may be added) for one that is
// also written. access may not exceed what the segment grants (an
// ErrPermission error otherwise): a READ-only segment can only be mapped
// for reading. The owner checks the import's token again before it hands
// the memory out, and ctx bounds that exchange.
//
// It fails with an error matching urma.ErrNotSupported when the device
// cannot map imports (urma.DeviceAttr.MapImports is false: verbs
// devices), or when the owner registered the memory from its own heap
// with Register, which only a copy can reach: the owner must allocate
// memory to be mapped with Alloc.
func (t *Target) Map(ctx context.Context, access Access) (*Mapping, error) {
	op := func(err error) error { return &urma.OpError{Op: "segment map", Obj: t.Descriptor().String(), Err: err} }
	if err := access.Validate(); err != nil {
		return nil, op(err)
	}
	if access == LocalOnly {
		return nil, op(provider.Errorf(urma.ErrInvalid, "LOCAL_ONLY names no access to map: use Read, or Read|Write"))
	}
	granted := t.Descriptor().Access
	if access&^granted != 0 {
		return nil, op(provider.Errorf(urma.ErrPermission, "the segment grants %v; %v was asked", granted, access))
	}
	m, ok := t.p.(provider.TargetMapper)
	if !ok {
		return nil, op(provider.Errorf(urma.ErrNotSupported, "the device cannot map imported segments (DeviceAttr.MapImports is false): reach the memory with READ and WRITE"))
	}
	write := access&Write != 0
	pm, err := m.MapTarget(ctx, write)
	if err != nil {
		return nil, op(err)
	}
	b := pm.Bytes()
	mp := &Mapping{p: pm, mem: b, n: len(b), access: access, t: t}
	if !t.maps.add(mp) {
		_ = pm.Close()
		return nil, op(provider.Errorf(urma.ErrClosed, "the target was unimported"))
	}
	return mp, nil
}

// Len is the mapping's length in bytes, the segment's length.
func (m *Mapping) Len() int { return m.n }

// Access is the access the mapping was made with.
func (m *Mapping) Access() Access { return m.access }

func (m *Mapping) errClosed(op string) error {
	return &urma.OpError{Op: op, Err: provider.Errorf(urma.ErrClosed, "the mapping was unmapped")}
}

// Bytes returns the memory of a READ|WRITE mapping, valid until Unmap (see
// the type's Life cycle). A READ mapping has no slice: it fails with
// ErrPermission, and ReadAt and LoadUint64 read it.
func (m *Mapping) Bytes() ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.mem == nil {
		return nil, m.errClosed("mapping bytes")
	}
	if m.access&Write == 0 {
		return nil, &urma.OpError{Op: "mapping bytes", Err: provider.Errorf(urma.ErrPermission,
			"the mapping is read-only (a store would crash the process): read it with ReadAt or LoadUint64")}
	}
	return m.mem, nil
}

// ReadAt copies the mapping's bytes at off into p (io.ReaderAt).
func (m *Mapping) ReadAt(p []byte, off int64) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.mem == nil {
		return 0, m.errClosed("mapping read")
	}
	if off < 0 {
		return 0, &urma.OpError{Op: "mapping read", Err: provider.Errorf(urma.ErrInvalid, "negative offset %d", off)}
	}
	if off >= int64(m.n) {
		return 0, io.EOF
	}
	n := copy(p, m.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt copies p into the mapping at off (io.WriterAt). It writes
// nothing when p does not fit, and fails with ErrPermission on a READ
// mapping.
func (m *Mapping) WriteAt(p []byte, off int64) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.mem == nil {
		return 0, m.errClosed("mapping write")
	}
	if m.access&Write == 0 {
		return 0, &urma.OpError{Op: "mapping write", Err: provider.Errorf(urma.ErrPermission, "the mapping is read-only")}
	}
	if off < 0 || off > int64(m.n) || int64(len(p)) > int64(m.n)-off {
		return 0, &urma.OpError{Op: "mapping write", Err: provider.Errorf(urma.ErrRange,
			"%d bytes at offset %d of a %d-byte mapping", len(p), off, m.n)}
	}
	return copy(m.mem[off:], p), nil
}

// word checks an 8-byte word at off and returns its address; the caller
// holds m.mu for reading.
func (m *Mapping) word(op string, off int64) (*uint64, error) {
	if m.mem == nil {
		return nil, m.errClosed(op)
	}
	if off < 0 || off%8 != 0 || off > int64(m.n)-8 {
		return nil, &urma.OpError{Op: op, Err: provider.Errorf(urma.ErrRange,
			"8 bytes at offset %d of a %d-byte mapping, at a multiple of 8", off, m.n)}
	}
	// A mapping starts on a page, so an offset that is a multiple of 8
	// is an aligned address.
	return (*uint64)(unsafe.Pointer(&m.mem[off])), nil
}

// LoadUint64 atomically loads the 8-byte word at off, in host byte order
// (the order of URMA's atomics). off must be a multiple of 8.
func (m *Mapping) LoadUint64(off int64) (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, err := m.word("mapping load", off)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint64(p), nil
}

// StoreUint64 atomically stores v in the 8-byte word at off of a
// READ|WRITE mapping. off must be a multiple of 8.
func (m *Mapping) StoreUint64(off int64, v uint64) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.mem != nil && m.access&Write == 0 {
		return &urma.OpError{Op: "mapping store", Err: provider.Errorf(urma.ErrPermission, "the mapping is read-only")}
	}
	p, err := m.word("mapping store", off)
	if err != nil {
		return err
	}
	atomic.StoreUint64(p, v)
	return nil
}

// Unmap unmaps the memory (see the type's Life cycle). It is idempotent
// and nil-safe.
func (m *Mapping) Unmap() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.mem == nil {
		m.mu.Unlock()
		return nil
	}
	m.mem = nil
	err := m.p.Close()
	m.mu.Unlock()
	m.t.maps.remove(m)
	if err != nil {
		return &urma.OpError{Op: "mapping unmap", Err: err}
	}
	return nil
}

// Close is Unmap, for io.Closer.
func (m *Mapping) Close() error { return m.Unmap() }

// mapSet is a target's live mappings, which Unimport unmaps.
type mapSet struct {
	mu     sync.Mutex
	set    map[*Mapping]struct{}
	closed bool
}

// add records m, or reports false once the target is unimported.
func (s *mapSet) add(m *Mapping) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.set == nil {
		s.set = map[*Mapping]struct{}{}
	}
	s.set[m] = struct{}{}
	return true
}

func (s *mapSet) remove(m *Mapping) {
	s.mu.Lock()
	delete(s.set, m)
	s.mu.Unlock()
}

// close unmaps every mapping and refuses new ones.
func (s *mapSet) close() {
	s.mu.Lock()
	s.closed = true
	all := make([]*Mapping, 0, len(s.set))
	for m := range s.set {
		all = append(all, m)
	}
	s.mu.Unlock()
	for _, m := range all {
		_ = m.Unmap()
	}
}
