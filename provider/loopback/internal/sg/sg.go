package sg

import (
	"encoding/binary"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// MaxSGE is the most spans a List holds: the most SGEs of a request.
const MaxSGE = 16

// Span is a piece of memory taken for the duration of one request. A span
// with a nil B lies in another process, PID, at Raddr; N is its length
// either way. PID means nothing in a span of this process's memory.
//
// Held is the count of accesses in flight to the span's memory that its
// owner waits out before it lets go of the memory, when the owner counts
// them: the span holds one access, which releasing its list counts out
// (nil: the span holds nothing). A counter, not an interface to call:
// releasing a list is on every request's path, and stays inlined.
//
// Spans are filled in place, field by field, not copied from a literal or
// a returned struct: such a struct is copied through stack temporaries in
// wide loads, which cannot be forwarded from the narrow stores that built
// it and stall for every store before them.
type Span struct {
	B     []byte
	Raddr uint64
	N     uint64
	PID   int
	Held  *atomic.Int32
}

// Remote tells whether the span lies in another process.
func (s *Span) Remote() bool { return s.B == nil && s.N > 0 }

// List is a scatter/gather list resolved to memory. A request's lists are
// kept by the provider's queue, not built on the stack: a fresh one would
// be MaxSGE spans to zero for every request.
type List struct {
	s [MaxSGE]Span
	n int
}

// Len is the number of the list's spans.
func (l *List) Len() int { return l.n }

// At is the list's i-th span (i < MaxSGE).
func (l *List) At(i int) *Span { return &l.s[i] }

// Next is where the list's next span goes, for a caller to fill in place
// (see Span); Grow then adds it.
func (l *List) Next() *Span { return &l.s[l.n] }

// Grow adds the span Next returned.
func (l *List) Grow() { l.n++ }

// Reset empties the list without releasing its spans (see Release).
func (l *List) Reset() { l.n = 0 }

// Add adds s.
func (l *List) Add(s Span) { l.s[l.n] = s; l.n++ }

// Only makes the list the single span s, without taking an access.
func (l *List) Only(s Span) *List {
	l.s[0], l.n = s, 1
	return l
}

// AddBytes adds b, which holds no access. Its fields are stored one by
// one, not copied from a literal (see Span).
func (l *List) AddBytes(b []byte) {
	s := &l.s[l.n]
	s.B, s.Raddr, s.N, s.PID, s.Held = b, 0, uint64(len(b)), 0, nil
	l.n++
}

// Release counts out the accesses the list's spans hold and forgets the
// spans, so that a kept list holds no caller memory alive.
func (l *List) Release() {
	for i := 0; i < l.n; i++ {
		if l.s[i].Held != nil {
			l.s[i].Held.Add(-1)
		}
		l.s[i] = Span{}
	}
	l.n = 0
}

// Total is the list's length in bytes.
func (l *List) Total() uint64 {
	var t uint64
	for i := 0; i < l.n; i++ {
		t += l.s[i].N
	}
	return t
}

// HasRemote tells whether a span of the list lies in another process.
func (l *List) HasRemote() bool {
	for i := 0; i < l.n; i++ {
		if l.s[i].Remote() {
			return true
		}
	}
	return false
}

// Sub sets r to the part [off, off+n) of the list's stream; its spans
// share the list's accesses and are not released on their own.
func (l *List) Sub(off, n uint64, r *List) {
	r.n = 0
	for i := 0; i < l.n && n > 0; i++ {
		s := l.s[i]
		if off >= s.N {
			off -= s.N
			continue
		}
		k := min(s.N-off, n)
		if s.B != nil {
			s.B = s.B[off : off+k]
		} else {
			s.Raddr += off
		}
		s.N = k
		r.Add(s)
		off, n = 0, n-k
	}
}

// Copy copies src into dst piece by piece and returns the bytes copied.
// Either list may mix memory this process maps with memory of one other
// process; the pieces of the other process go through one
// process_vm_readv/writev at the end. At most one side lies in another
// process.
func Copy(dst, src *List) (uint64, error) {
	if dst.n == 1 && src.n == 1 && !dst.s[0].Remote() && !src.s[0].Remote() {
		return uint64(copy(dst.s[0].B, src.s[0].B)), nil
	}
	var far pvmBatch
	var n, doff, soff uint64
	for di, si := 0, 0; di < dst.n && si < src.n; {
		d, s := &dst.s[di], &src.s[si]
		k := min(d.N-doff, s.N-soff)
		var err error
		switch {
		case k == 0:
		case d.Remote() && s.Remote():
			err = provider.Errorf(provider.ErrFail, "a copy between two other processes (pids %d and %d)", d.PID, s.PID)
		case d.Remote():
			err = far.add(d.PID, d.Raddr+doff, s.B[soff:soff+k], true)
		case s.Remote():
			err = far.add(s.PID, s.Raddr+soff, d.B[doff:doff+k], false)
		default:
			copy(d.B[doff:doff+k], s.B[soff:soff+k])
		}
		if err != nil {
			return 0, err
		}
		n, doff, soff = n+k, doff+k, soff+k
		if doff == d.N {
			di, doff = di+1, 0
		}
		if soff == s.N {
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
// with local bytes. A copy of two lists of MaxSGE spans has at most
// 2*MaxSGE pieces.
type pvmBatch struct {
	pid    int
	write  bool
	n      int
	total  uint64
	local  [2 * MaxSGE]unix.Iovec
	remote [2 * MaxSGE]unix.RemoteIovec
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

// tailLen is how many of a WRITE's last bytes Place stores after all the
// others.
const tailLen = 8

// Place is Copy for WRITE and WRITE_IMM: every byte of the destination is
// visible before its last tailLen bytes are stored, so a target that polls
// the last byte of a request (HERD) never reads a half-written one. A
// single copy does not promise that: memmove stores the head of some sizes
// after the body, REP MOVS orders nothing within itself, weakly ordered
// CPUs reorder stores, and process_vm_writev is a kernel memcpy. Hence two
// copies with a barrier between them.
func Place(dst, src *List) (uint64, error) {
	if dst.n == 1 && src.n == 1 && !dst.s[0].Remote() && !src.s[0].Remote() {
		return PlaceBytes(dst.s[0].B, src.s[0].B), nil
	}
	want := min(dst.Total(), src.Total())
	if want <= tailLen {
		return Copy(dst, src)
	}
	var d, s List
	dst.Sub(0, want-tailLen, &d)
	src.Sub(0, want-tailLen, &s)
	n, err := Copy(&d, &s)
	if err != nil {
		return n, err
	}
	shm.StoreBarrier()
	dst.Sub(want-tailLen, tailLen, &d)
	src.Sub(want-tailLen, tailLen, &s)
	m, err := Copy(&d, &s)
	return n + m, err
}

// PlaceBytes is Place for one piece of memory on each side.
func PlaceBytes(d, s []byte) uint64 {
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
