package segment_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// pair opens an owner and an importer context on loopback0.
func pair(t *testing.T) (owner, importer *urma.Context) {
	t.Helper()
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	owner, err = urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { owner.Close() })
	importer, err = urma.Open(dev, 1, nil)
	require.NoError(t, err)
	t.Cleanup(func() { importer.Close() })
	return owner, importer
}

func allocImport(t *testing.T, owner, importer *urma.Context, access segment.Access) (*segment.Segment, *segment.Target) {
	t.Helper()
	seg, err := segment.Alloc(owner, 8192, segment.Config{Access: access, TokenPolicy: segment.TokenPlainText, Token: 77})
	require.NoError(t, err)
	t.Cleanup(func() { seg.Unregister() })
	tg, err := segment.Import(context.Background(), importer, seg.Descriptor(), 77)
	require.NoError(t, err)
	t.Cleanup(func() { tg.Unimport() })
	return seg, tg
}

// segMappings counts this process's mappings of segment memory whose
// permissions are perms ("rw-s", "r--s").
func segMappings(t *testing.T, perms string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && f[1] == perms && strings.Contains(l, "urma-seg") {
			n++
		}
	}
	return n
}

func TestMapReadWrite(t *testing.T) {
	owner, importer := pair(t)
	seg, tg := allocImport(t, owner, importer, segment.Read|segment.Write|segment.Atomic)
	before := segMappings(t, "rw-s")
	m, err := tg.Map(context.Background(), segment.Read|segment.Write|segment.Atomic)
	require.NoError(t, err)
	require.Equal(t, before+1, segMappings(t, "rw-s"), "a mapping of its own")
	require.Equal(t, segment.Read|segment.Write|segment.Atomic, m.Access())
	require.Equal(t, 8192, m.Len())
	b, err := m.Bytes()
	require.NoError(t, err)
	require.Len(t, b, 8192)

	copy(seg.Bytes(), "written by the owner")
	require.Equal(t, "written by the owner", string(b[:20]))
	copy(b[4096:], "written by the importer")
	require.Equal(t, "written by the importer", string(seg.Bytes()[4096:4096+23]))

	w, err := seg.Uint64(64)
	require.NoError(t, err)
	w.Store(7)
	v, err := m.LoadUint64(64)
	require.NoError(t, err)
	require.Equal(t, uint64(7), v)
	require.NoError(t, m.StoreUint64(64, 9))
	require.Equal(t, uint64(9), w.Load())

	n, err := m.WriteAt([]byte("at"), 8190)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	_, err = m.WriteAt([]byte("past"), 8190)
	require.ErrorIs(t, err, urma.ErrRange)
	got := make([]byte, 4)
	n, err = m.ReadAt(got, 8190)
	require.Equal(t, io.EOF, err)
	require.Equal(t, "at", string(got[:n]))
	_, err = m.ReadAt(got, 8192)
	require.Equal(t, io.EOF, err)
	_, err = m.ReadAt(got, -1)
	require.ErrorIs(t, err, urma.ErrInvalid)
	for _, off := range []int64{-8, 4, 8192 - 4, 8192} {
		_, err = m.LoadUint64(off)
		require.ErrorIs(t, err, urma.ErrRange, "offset %d", off)
	}

	require.NoError(t, m.Unmap())
	require.Equal(t, before, segMappings(t, "rw-s"), "Unmap unmaps")
	closedEverywhere(t, m)
}

// closedEverywhere checks that every accessor of an unmapped mapping
// fails with an error matching net.ErrClosed.
func closedEverywhere(t *testing.T, m *segment.Mapping) {
	t.Helper()
	_, err := m.Bytes()
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = m.ReadAt(make([]byte, 8), 0)
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = m.WriteAt(make([]byte, 8), 0)
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = m.LoadUint64(0)
	require.ErrorIs(t, err, net.ErrClosed)
	require.ErrorIs(t, m.StoreUint64(0, 1), net.ErrClosed)
	require.NoError(t, m.Unmap(), "idempotent")
	require.NoError(t, m.Close())
}

// A READ grant is mapped by the kernel for reading only, and no method
// hands that memory out as a slice or stores to it.
func TestMapReadOnly(t *testing.T) {
	owner, importer := pair(t)
	seg, tg := allocImport(t, owner, importer, segment.Read)
	for _, a := range []segment.Access{segment.Read | segment.Write, segment.Read | segment.Write | segment.Atomic} {
		_, err := tg.Map(context.Background(), a)
		require.ErrorIs(t, err, urma.ErrPermission, "%v", a)
	}
	before := segMappings(t, "r--s")
	m, err := tg.Map(context.Background(), segment.Read)
	require.NoError(t, err)
	defer m.Unmap()
	require.Equal(t, before+1, segMappings(t, "r--s"), "mapped PROT_READ")

	copy(seg.Bytes()[100:], "visible")
	got := make([]byte, 7)
	_, err = m.ReadAt(got, 100)
	require.NoError(t, err)
	require.Equal(t, "visible", string(got))
	w, err := seg.Uint64(8)
	require.NoError(t, err)
	w.Store(1 << 40)
	v, err := m.LoadUint64(8)
	require.NoError(t, err)
	require.Equal(t, uint64(1<<40), v)

	b, err := m.Bytes()
	require.ErrorIs(t, err, urma.ErrPermission)
	require.Nil(t, b)
	_, err = m.WriteAt([]byte{1}, 0)
	require.ErrorIs(t, err, urma.ErrPermission)
	require.ErrorIs(t, m.StoreUint64(0, 1), urma.ErrPermission)
	var _ io.ReaderAt = m
}

// Access a mapping can never have: LOCAL_ONLY, and WRITE without READ,
// which no segment grants either.
func TestMapBadAccess(t *testing.T) {
	owner, importer := pair(t)
	_, tg := allocImport(t, owner, importer, segment.Read|segment.Write)
	for _, a := range []segment.Access{segment.LocalOnly, segment.Write, segment.Write | segment.Atomic, 0, 0x40} {
		m, err := tg.Map(context.Background(), a)
		require.ErrorIs(t, err, urma.ErrInvalid, "%v", a)
		require.Nil(t, m)
	}
	_, err := segment.Alloc(owner, 4096, segment.Config{Access: segment.Write})
	require.ErrorIs(t, err, urma.ErrInvalid, "a write-only segment does not exist")
	local, err := segment.Alloc(owner, 4096, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	defer local.Unregister()
	_, err = segment.Import(context.Background(), importer, local.Descriptor(), 0)
	require.ErrorIs(t, err, urma.ErrPermission, "LOCAL_ONLY is never imported, so never mapped")
}

// Memory the owner registered from its heap is not a file: it cannot be
// mapped, and the error says what to do instead.
func TestMapCallerMemory(t *testing.T) {
	owner, importer := pair(t)
	buf := make([]byte, 4096)
	seg, err := segment.Register(owner, buf, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	defer seg.Unregister()
	tg, err := segment.Import(context.Background(), importer, seg.Descriptor(), 0)
	require.NoError(t, err)
	defer tg.Unimport()
	_, err = tg.Map(context.Background(), segment.Read)
	require.ErrorIs(t, err, urma.ErrNotSupported)
	require.Contains(t, err.Error(), "Alloc")
}

// Unimport unmaps the target's mappings, and Map afterwards fails.
func TestMapUnimport(t *testing.T) {
	owner, importer := pair(t)
	_, tg := allocImport(t, owner, importer, segment.Read|segment.Write)
	before := segMappings(t, "rw-s") + segMappings(t, "r--s")
	rw, err := tg.Map(context.Background(), segment.Read|segment.Write)
	require.NoError(t, err)
	ro, err := tg.Map(context.Background(), segment.Read)
	require.NoError(t, err)
	require.NoError(t, ro.Unmap())
	require.NoError(t, tg.Unimport())
	require.Equal(t, before, segMappings(t, "rw-s")+segMappings(t, "r--s"))
	closedEverywhere(t, rw)
	closedEverywhere(t, ro)
	_, err = tg.Map(context.Background(), segment.Read)
	require.ErrorIs(t, err, net.ErrClosed)
}

// A mapping outlives the owner's segment: the memory stays, with the
// values last written, until Unmap. A new Map finds the segment gone.
func TestMapOwnerUnregisters(t *testing.T) {
	owner, importer := pair(t)
	seg, tg := allocImport(t, owner, importer, segment.Read|segment.Write)
	m, err := tg.Map(context.Background(), segment.Read|segment.Write)
	require.NoError(t, err)
	defer m.Unmap()
	copy(seg.Bytes(), "last words")
	require.NoError(t, seg.Unregister())
	_, err = tg.Map(context.Background(), segment.Read)
	require.ErrorIs(t, err, urma.ErrNotFound)
	require.NoError(t, owner.Close())
	b, err := m.Bytes()
	require.NoError(t, err)
	require.Equal(t, "last words", string(b[:10]))
	copy(b, "still memory")
	require.Equal(t, "still memory", string(b[:12]))
}

// Unmap while other goroutines read and write through the mapping's
// methods: each call either completes or fails with net.ErrClosed, and
// none touches unmapped memory.
func TestMapUnmapRace(t *testing.T) {
	owner, importer := pair(t)
	_, tg := allocImport(t, owner, importer, segment.Read|segment.Write)
	m, err := tg.Map(context.Background(), segment.Read|segment.Write)
	require.NoError(t, err)
	var wg sync.WaitGroup
	var ops atomic.Int64
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256)
			for j := 0; ; j++ {
				ops.Add(1)
				var err error
				switch (i + j) % 3 {
				case 0:
					_, err = m.ReadAt(buf, int64(j%32)*256)
				case 1:
					_, err = m.WriteAt(buf, int64(j%32)*256)
				default:
					_, err = m.LoadUint64(int64(j%1024) * 8)
				}
				if err != nil {
					if !errors.Is(err, net.ErrClosed) {
						t.Errorf("unexpected error: %v", err)
					}
					return
				}
			}
		}()
	}
	for ops.Load() < 1000 {
		runtime.Gosched()
	}
	require.NoError(t, m.Unmap())
	wg.Wait()
}
