package loopback

import (
	"encoding/binary"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// memRef is how a request reaches segment memory, wherever the segment
// lives: the owner's segEntry says whether it is still registered, and mem is
// the memory as this process sees it. mem is nil for caller memory of another
// process, which only process_vm_readv/writev reach (pid says whose).
type memRef struct {
	ent *segEntry
	// inflight counts this process's accesses to the owner's caller
	// memory, in the count page of its link (nil when not counted).
	inflight *atomic.Int32
	gen      uint32
	va       uint64
	len      uint64
	access   provider.Access
	mem      []byte
	pid      int
	// peer is the owner's process when it is not this one; its mappings
	// stay valid while peer.usable says so, for as long as the request's
	// queue lock is held.
	peer *peerConn
	// counted accesses reach the owner's own memory from another process
	// (through process_vm_*), so they hold inflight while they run; the
	// owner's Unregister waits for them. Accesses from the owner's process
	// are waited out through the queue locks instead (see quiesce.go).
	counted bool
}

// acquire pins the segment for one access. It returns CRSuccess, or the
// status the access fails with: REM_ACCESS_ABORT_ERR if the segment was
// unregistered, the peer's loss status if its process is gone.
func (r *memRef) acquire() provider.CRStatus {
	if r.peer != nil {
		if st := r.peer.usable(); st != provider.CRSuccess {
			return st
		}
	}
	return r.pin()
}

func (r *memRef) release() { r.unpin() }

// pin is acquire for a caller that knows the peer usable (or with no
// peer): the access is counted if it must be, and the segment checked.
func (r *memRef) pin() provider.CRStatus {
	if r.counted {
		r.inflight.Add(1)
	}
	if r.ent.state.Load() != segLive || r.ent.gen.Load() != r.gen {
		r.unpin()
		return provider.CRRemAccessAbortErr
	}
	return provider.CRSuccess
}

func (r *memRef) unpin() {
	if r.counted {
		r.inflight.Add(-1)
	}
}

// span sets s to the range [addr, addr+n) if it lies inside the segment
// and tells whether it does (s is left alone when not). It fills s in place
// rather than returning a span: a returned struct is copied through stack
// temporaries in wide loads, which cannot be forwarded from the narrow
// stores that built it and stall for every store before them.
func (r *memRef) span(addr uint64, n uint32, s *span) bool {
	off := addr - r.va
	if addr < r.va || off > r.len || uint64(n) > r.len-off {
		return false
	}
	s.n, s.ref = uint64(n), r
	if r.mem == nil {
		s.b, s.raddr = nil, addr
		return true
	}
	s.b, s.raddr = r.mem[off:off+uint64(n)], 0
	return true
}

// span is a piece of memory taken for the duration of one request, with the
// reference it was acquired through (nil for inline data). A span with a nil
// b lies in another process at raddr.
type span struct {
	b     []byte
	raddr uint64
	n     uint64
	ref   *memRef
}

func (s *span) remote() bool { return s.b == nil && s.n > 0 }

// sgList is a scatter/gather list resolved to memory. The lists of a
// request live in its sendq (under the queue's lock), not on the stack:
// a fresh one would be maxSGE spans to zero for every request.
type sgList struct {
	s [maxSGE]span
	n int
}

func (l *sgList) add(s span) { l.s[l.n] = s; l.n++ }

// only makes the list the single span s, without taking a reference.
func (l *sgList) only(s span) *sgList {
	l.s[0], l.n = s, 1
	return l
}

// addBytes adds b, which needs no reference. Its fields are stored one by
// one, not copied from a literal (see span).
func (l *sgList) addBytes(b []byte) {
	s := &l.s[l.n]
	s.b, s.raddr, s.n, s.ref = b, 0, uint64(len(b)), nil
	l.n++
}

// release drops the list's references and forgets its spans, so that a
// kept list holds no caller memory alive.
func (l *sgList) release() {
	for i := 0; i < l.n; i++ {
		if l.s[i].ref != nil {
			l.s[i].ref.release()
		}
		l.s[i] = span{}
	}
	l.n = 0
}

func (l *sgList) total() uint64 {
	var t uint64
	for i := 0; i < l.n; i++ {
		t += l.s[i].n
	}
	return t
}

func (l *sgList) hasRemote() bool {
	for i := 0; i < l.n; i++ {
		if l.s[i].remote() {
			return true
		}
	}
	return false
}

// copySG copies src into dst piece by piece and returns the bytes copied.
// Either list may mix memory this process maps with memory of one other
// process (caller memory that process registered); the pieces of the other
// process go through one process_vm_readv/writev at the end. At most one
// side lies in another process.
func copySG(dst, src *sgList) (uint64, error) {
	if dst.n == 1 && src.n == 1 && !dst.s[0].remote() && !src.s[0].remote() {
		return uint64(copy(dst.s[0].b, src.s[0].b)), nil
	}
	var far pvmBatch
	var n, doff, soff uint64
	for di, si := 0, 0; di < dst.n && si < src.n; {
		d, s := &dst.s[di], &src.s[si]
		k := min(d.n-doff, s.n-soff)
		var err error
		switch {
		case k == 0:
		case d.remote() && s.remote():
			err = provider.Errorf(provider.ErrFail, "a copy between two other processes (pids %d and %d)", d.ref.pid, s.ref.pid)
		case d.remote():
			err = far.add(d.ref.pid, d.raddr+doff, s.b[soff:soff+k], true)
		case s.remote():
			err = far.add(s.ref.pid, s.raddr+soff, d.b[doff:doff+k], false)
		default:
			copy(d.b[doff:doff+k], s.b[soff:soff+k])
		}
		if err != nil {
			return 0, err
		}
		n, doff, soff = n+k, doff+k, soff+k
		if doff == d.n {
			di, doff = di+1, 0
		}
		if soff == s.n {
			si, soff = si+1, 0
		}
	}
	if err := far.run(); err != nil {
		return 0, err
	}
	return n, nil
}

// pvmBatch gathers the pieces of one copy that lie in another process, for
// one process_vm_readv/writev: each piece pairs a range of that process
// with local bytes. A copy of two lists of maxSGE spans has at most
// 2*maxSGE pieces.
type pvmBatch struct {
	pid    int
	write  bool
	n      int
	total  uint64
	local  [2 * maxSGE]unix.Iovec
	remote [2 * maxSGE]unix.RemoteIovec
}

// add queues the piece: raddr in process pid, and near in this process,
// which the piece writes from (write) or reads into.
func (b *pvmBatch) add(pid int, raddr uint64, near []byte, write bool) error {
	if b.n > 0 && (pid != b.pid || write != b.write) {
		return provider.Errorf(provider.ErrFail, "one copy reaches pids %d and %d", b.pid, pid)
	}
	if b.n == len(b.local) {
		return provider.Errorf(provider.ErrFail, "a copy of more than %d pieces", len(b.local))
	}
	b.pid, b.write = pid, write
	b.local[b.n] = unix.Iovec{Base: &near[0]}
	b.local[b.n].SetLen(len(near))
	b.remote[b.n] = unix.RemoteIovec{Base: uintptr(raddr), Len: len(near)}
	b.n++
	b.total += uint64(len(near))
	return nil
}

// run moves the queued pieces, all or nothing.
func (b *pvmBatch) run() error {
	if b.n == 0 {
		return nil
	}
	var n int
	var err error
	if b.write {
		n, err = unix.ProcessVMWritev(b.pid, b.local[:b.n], b.remote[:b.n], 0)
	} else {
		n, err = unix.ProcessVMReadv(b.pid, b.local[:b.n], b.remote[:b.n], 0)
	}
	if err != nil {
		return provider.Errorf(provider.ErrFail, "process_vm_readv/writev of %d bytes in pid %d: %v", b.total, b.pid, err)
	}
	if uint64(n) != b.total {
		return provider.Errorf(provider.ErrFail, "process_vm_readv/writev moved %d of %d bytes in pid %d", n, b.total, b.pid)
	}
	return nil
}

// tailLen is how many of a WRITE's last bytes placeSG stores after all the
// others.
const tailLen = 8

// placeSG is copySG for WRITE and WRITE_IMM: every byte of the destination
// is visible before its last tailLen bytes are stored, so a target that
// polls the last byte of a request (HERD) never reads a half-written one.
// A single copy does not promise that: memmove stores the head of some
// sizes after the body, REP MOVS orders nothing within itself, weakly
// ordered CPUs reorder stores, and process_vm_writev is a kernel memcpy.
// Hence two copies with a barrier between them.
func placeSG(dst, src *sgList) (uint64, error) {
	if dst.n == 1 && src.n == 1 && !dst.s[0].remote() && !src.s[0].remote() {
		return placeBytes(dst.s[0].b, src.s[0].b), nil
	}
	want := min(dst.total(), src.total())
	if want <= tailLen {
		return copySG(dst, src)
	}
	var d, s sgList
	dst.sub(0, want-tailLen, &d)
	src.sub(0, want-tailLen, &s)
	n, err := copySG(&d, &s)
	if err != nil {
		return n, err
	}
	shm.StoreBarrier()
	dst.sub(want-tailLen, tailLen, &d)
	src.sub(want-tailLen, tailLen, &s)
	m, err := copySG(&d, &s)
	return n + m, err
}

// placeBytes is placeSG for one piece of memory on each side.
func placeBytes(d, s []byte) uint64 {
	want := min(len(d), len(s))
	if want == 8 {
		// One 8-byte move, without the call to memmove: 8-byte flags
		// and counters are the common small WRITE, and this is on a
		// latency loop's critical path.
		binary.NativeEndian.PutUint64(d, binary.NativeEndian.Uint64(s))
		return 8
	}
	if want <= tailLen {
		return uint64(copy(d, s))
	}
	d, s = d[:want], s[:want]
	copy(d[:want-tailLen], s)
	shm.StoreBarrier()
	copy(d[want-tailLen:], s[want-tailLen:])
	return uint64(want)
}

// sub sets r to the part [off, off+n) of the list's stream; its spans
// share the list's references and are not released on their own.
func (l *sgList) sub(off, n uint64, r *sgList) {
	r.n = 0
	for i := 0; i < l.n && n > 0; i++ {
		s := l.s[i]
		if off >= s.n {
			off -= s.n
			continue
		}
		k := min(s.n-off, n)
		if s.b != nil {
			s.b = s.b[off : off+k]
		} else {
			s.raddr += off
		}
		s.n = k
		r.add(s)
		off, n = 0, n-k
	}
}
