package loopback

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// An importer in the owner's process gets, for reading, a memfd the
// kernel refuses to map for writing, as a peer process does.
func TestMapFDReadOnly(t *testing.T) {
	c := openOwner(t)
	ro := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead})
	fd, size, err := ro.mapFD(false)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.Equal(t, uint64(4096), size)
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Equal(t, unix.O_RDONLY, fl&unix.O_ACCMODE)
	_, err = unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.ErrorIs(t, err, unix.EACCES)

	tg := &target{ctx: c, desc: ro.desc, ref: ro.ref, seg: ro}
	_, err = tg.MapTarget(t.Context(), true)
	require.ErrorIs(t, err, provider.ErrPermission)
	m, err := tg.MapTarget(t.Context(), false)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "idempotent")
	require.NoError(t, tg.Close())
	_, err = tg.MapTarget(t.Context(), false)
	require.ErrorIs(t, err, provider.ErrClosed)

	require.NoError(t, ro.Close())
	_, _, err = ro.mapFD(false)
	require.ErrorIs(t, err, provider.ErrNotFound)

	rw := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead | provider.AccessWrite})
	tg = &target{ctx: c, desc: rw.desc, ref: rw.ref, seg: rw}
	require.NoError(t, c.Close())
	_, err = tg.MapTarget(t.Context(), true)
	require.ErrorIs(t, err, provider.ErrClosed, "the importer's context is closed")
}
