package sg

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

// pattern is n bytes that differ from their neighbours, starting at seed.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)*7
	}
	return b
}

// split makes a list of the pieces of b with the given sizes, in order.
func split(b []byte, sizes ...int) *List {
	var l List
	off := 0
	for _, n := range sizes {
		l.AddBytes(b[off : off+n])
		off += n
	}
	return &l
}

// far makes a span of b as another process would see it: by address, in
// this process's own pid, reached through process_vm_readv/writev.
func far(b []byte) Span {
	return Span{Raddr: uint64(uintptr(unsafe.Pointer(&b[0]))), N: uint64(len(b)), PID: os.Getpid()}
}

func TestCopyPieces(t *testing.T) {
	src := pattern(100, 1)
	for _, c := range []struct {
		name     string
		dst, src []int
	}{
		{"one to one", []int{100}, []int{100}},
		{"one to many", []int{1, 9, 30, 60}, []int{100}},
		{"many to one", []int{100}, []int{7, 8, 85}},
		{"uneven", []int{3, 50, 1, 46}, []int{10, 10, 79, 1}},
		{"empty pieces", []int{0, 50, 0, 50}, []int{25, 0, 75}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := make([]byte, 100)
			n, err := Copy(split(dst, c.dst...), split(src, c.src...))
			require.NoError(t, err)
			require.Equal(t, uint64(100), n)
			require.Equal(t, src, dst)
		})
	}
}

func TestCopyShorterSide(t *testing.T) {
	src := pattern(40, 3)
	dst := make([]byte, 64)
	n, err := Copy(split(dst, 16, 48), split(src, 30, 10))
	require.NoError(t, err)
	require.Equal(t, uint64(40), n)
	require.Equal(t, src, dst[:40])
	require.Equal(t, make([]byte, 24), dst[40:], "bytes past the source stay as they were")

	dst = make([]byte, 20)
	n, err = Copy(split(dst, 5, 15), split(src, 30, 10))
	require.NoError(t, err)
	require.Equal(t, uint64(20), n)
	require.Equal(t, src[:20], dst)
}

func TestPlacePieces(t *testing.T) {
	for _, size := range []int{1, 7, 8, 9, 15, 16, 17, 64, 100} {
		for _, sizes := range [][2][]int{
			{{size}, {size}},
			{{size / 2, size - size/2}, {size}},
			{{size}, {1, size - 1}},
			{{size - size/3, size / 3}, {size / 4, size - size/4}},
		} {
			t.Run(fmt.Sprint(size, sizes), func(t *testing.T) {
				src := pattern(size, 5)
				dst := make([]byte, size)
				n, err := Place(split(dst, sizes[0]...), split(src, sizes[1]...))
				require.NoError(t, err)
				require.Equal(t, uint64(size), n)
				require.Equal(t, src, dst)
			})
		}
	}
}

// Place stores as many bytes as the shorter side holds: the tail it stores
// last is the end of what it copies, not of the longer side.
func TestPlaceShorterSide(t *testing.T) {
	src := pattern(30, 9)
	dst := make([]byte, 50)
	n, err := Place(split(dst, 20, 30), split(src, 10, 20))
	require.NoError(t, err)
	require.Equal(t, uint64(30), n)
	require.Equal(t, src, dst[:30])
	require.Equal(t, make([]byte, 20), dst[30:])
}

func TestPlaceBytes(t *testing.T) {
	for n := 0; n <= 32; n++ {
		src := pattern(n, byte(n))
		dst := make([]byte, n)
		require.Equal(t, uint64(n), PlaceBytes(dst, src), "length %d", n)
		require.Equal(t, src, dst, "length %d", n)

		// The shorter side decides, either way round.
		long := make([]byte, n+3)
		require.Equal(t, uint64(n), PlaceBytes(long, src), "length %d", n)
		require.Equal(t, src, long[:n])
		require.Equal(t, make([]byte, 3), long[n:])
		short := make([]byte, n)
		require.Equal(t, uint64(n), PlaceBytes(short, pattern(n+3, byte(n))), "length %d", n)
		require.Equal(t, src, short)
	}
}

func TestSub(t *testing.T) {
	b := pattern(30, 2)
	l := split(b, 10, 5, 15)
	var r List
	l.Sub(8, 10, &r)
	require.Equal(t, 3, r.Len())
	require.Equal(t, b[8:10], r.At(0).B)
	require.Equal(t, b[10:15], r.At(1).B)
	require.Equal(t, b[15:18], r.At(2).B)
	require.Equal(t, uint64(10), r.Total())

	l.Sub(10, 5, &r)
	require.Equal(t, 1, r.Len())
	require.Equal(t, b[10:15], r.At(0).B)

	l.Sub(25, 100, &r)
	require.Equal(t, 1, r.Len(), "a part past the end ends with the list")
	require.Equal(t, b[25:], r.At(0).B)

	l.Sub(30, 1, &r)
	require.Zero(t, r.Len())

	// A span of another process moves its address instead.
	var rl List
	s := far(b)
	rl.Add(s)
	rl.Sub(4, 6, &r)
	require.Equal(t, 1, r.Len())
	require.Nil(t, r.At(0).B)
	require.Equal(t, s.Raddr+4, r.At(0).Raddr)
	require.Equal(t, uint64(6), r.At(0).N)
	require.Equal(t, s.PID, r.At(0).PID)
}

func TestTotalAndHasRemote(t *testing.T) {
	var l List
	require.Zero(t, l.Total())
	require.False(t, l.HasRemote())
	l.AddBytes(make([]byte, 5))
	l.AddBytes(nil)
	require.Equal(t, uint64(5), l.Total())
	require.False(t, l.HasRemote(), "an empty span lies nowhere")
	l.Add(Span{Raddr: 1 << 20, N: 7, PID: 1})
	require.Equal(t, uint64(12), l.Total())
	require.True(t, l.HasRemote())
	require.True(t, l.At(2).Remote())
	require.False(t, l.At(1).Remote())
}

func TestRelease(t *testing.T) {
	var counts [3]atomic.Int32
	for i := range counts {
		counts[i].Store(10)
	}
	var l List
	b := make([]byte, 4)
	for i := range counts {
		s := l.Next()
		s.B, s.N, s.Held = b, 4, &counts[i]
		l.Grow()
	}
	l.AddBytes(b)
	l.Add(Span{B: b, N: 4, Held: &counts[0]})
	l.Release()
	require.Equal(t, int32(8), counts[0].Load())
	require.Equal(t, int32(9), counts[1].Load())
	require.Equal(t, int32(9), counts[2].Load())
	require.Zero(t, l.Len())
	for i := range MaxSGE {
		require.Equal(t, Span{}, *l.At(i), "span %d is forgotten", i)
	}
	l.Release()
	require.Equal(t, int32(8), counts[0].Load(), "an empty list releases nothing")

	// Only holds nothing of its own; Reset forgets without releasing.
	l.Only(Span{B: b, N: 4, Held: &counts[1]}).Reset()
	l.Release()
	require.Equal(t, int32(9), counts[1].Load())
}

func TestCopyRemote(t *testing.T) {
	theirs := make([]byte, 64)
	src := pattern(64, 11)

	// Written into "another" process in pieces of both sides.
	var dst List
	dst.Add(far(theirs[:20]))
	dst.Add(far(theirs[20:]))
	n, err := Copy(&dst, split(src, 5, 50, 9))
	require.NoError(t, err)
	require.Equal(t, uint64(64), n)
	require.Equal(t, src, theirs)

	// And read back, into pieces mixed with nothing remote on that side.
	got := make([]byte, 64)
	var from List
	from.Add(far(theirs[:33]))
	from.Add(far(theirs[33:]))
	n, err = Copy(split(got, 1, 62, 1), &from)
	require.NoError(t, err)
	require.Equal(t, uint64(64), n)
	require.Equal(t, src, got)

	// A side may mix local and remote pieces.
	mixed := make([]byte, 64)
	var mix List
	mix.AddBytes(mixed[:10])
	mix.Add(far(theirs[10:40]))
	mix.AddBytes(mixed[40:])
	clear(theirs)
	n, err = Copy(&mix, split(src, 64))
	require.NoError(t, err)
	require.Equal(t, uint64(64), n)
	require.Equal(t, src[:10], mixed[:10])
	require.Equal(t, src[10:40], theirs[10:40])
	require.Equal(t, src[40:], mixed[40:])

	// Place into another process, over its tail.
	clear(theirs)
	var one List
	one.Add(far(theirs))
	n, err = Place(&one, split(src, 64))
	require.NoError(t, err)
	require.Equal(t, uint64(64), n)
	require.Equal(t, src, theirs)
	runtime.KeepAlive(theirs)
}

func TestCopyRemoteErrors(t *testing.T) {
	a, b := make([]byte, 16), make([]byte, 16)
	pid := os.Getpid()

	var dst, src List
	dst.Add(far(a))
	src.Add(far(b))
	_, err := Copy(&dst, &src)
	require.ErrorIs(t, err, provider.ErrFail)
	require.ErrorContains(t, err, fmt.Sprintf("a copy between two other processes (pids %d and %d)", pid, pid))

	// Two pids on one side.
	dst.Reset()
	dst.Add(far(a[:8]))
	other := far(a[8:])
	other.PID = pid + 1
	dst.Add(other)
	_, err = Copy(&dst, split(b, 16))
	require.ErrorIs(t, err, provider.ErrFail)
	require.ErrorContains(t, err, fmt.Sprintf("one copy reaches pids %d and %d", pid, pid+1))

	// Reading and writing the other process in one copy.
	dst.Reset()
	dst.AddBytes(a[:8])
	dst.Add(far(a[8:]))
	src.Reset()
	src.Add(far(b[:8]))
	src.AddBytes(b[8:])
	_, err = Copy(&dst, &src)
	require.ErrorIs(t, err, provider.ErrFail)
	require.ErrorContains(t, err, fmt.Sprintf("one copy reaches pids %d and %d", pid, pid))

	// Memory the other process does not map.
	dst.Reset()
	dst.Add(Span{Raddr: 8, N: 16, PID: pid})
	_, err = Copy(&dst, split(b, 16))
	require.ErrorIs(t, err, provider.ErrFail)
	require.ErrorContains(t, err, fmt.Sprintf("process_vm_readv/writev of 16 bytes in pid %d", pid))
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

// Two lists of MaxSGE spans make at most 2*MaxSGE-1 pieces, within the
// batch; the batch itself refuses more than it holds.
func TestBatchPiecesLimit(t *testing.T) {
	buf := make([]byte, 2*MaxSGE+1)
	var b pvmBatch
	for i := range 2 * MaxSGE {
		require.NoError(t, b.add(os.Getpid(), uint64(i), buf[i:i+1], true))
	}
	err := b.add(os.Getpid(), 0, buf[2*MaxSGE:], true)
	require.ErrorIs(t, err, provider.ErrFail)
	require.ErrorContains(t, err, fmt.Sprintf("a copy of more than %d pieces", 2*MaxSGE))

	// Boundaries that never meet: every piece of one list is split by
	// the other's, 2*MaxSGE-1 pieces in all.
	theirs := make([]byte, 2*MaxSGE)
	src := pattern(2*MaxSGE, 4)
	var dst List
	sizes := make([]int, MaxSGE)
	for i := range MaxSGE {
		dst.Add(far(theirs[2*i : 2*i+2]))
		sizes[i] = 2
	}
	sizes[0], sizes[MaxSGE-1] = 1, 3
	n, err := Copy(&dst, split(src, sizes...))
	require.NoError(t, err)
	require.Equal(t, uint64(2*MaxSGE), n)
	require.Equal(t, src, theirs)
	runtime.KeepAlive(theirs)
}

func TestCopyEmpty(t *testing.T) {
	var a, b List
	n, err := Copy(&a, &b)
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = Place(&a, &b)
	require.NoError(t, err)
	require.Zero(t, n)
}
