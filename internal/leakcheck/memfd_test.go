package leakcheck

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func mapMemfd(t *testing.T, name string) (unmap func()) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	require.NoError(t, err)
	require.NoError(t, unix.Ftruncate(fd, 4096))
	mem, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	return func() {
		_ = unix.Munmap(mem)
		_ = unix.Close(fd)
	}
}
