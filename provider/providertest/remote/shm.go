package remote

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// mapping is a MAP_SHARED view of a file of the peer.
type mapping struct {
	once  sync.Once
	whole []byte // what was mapped, page aligned
	mem   []byte // the part asked for
}

func (m *mapping) unmap() {
	if m == nil {
		return
	}
	m.once.Do(func() {
		_ = unix.Munmap(m.whole)
		m.whole, m.mem = nil, nil
	})
}

func identify(fd int) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fileID{}, err
	}
	return fileID{FD: fd, Dev: st.Dev, Ino: st.Ino}, nil
}

// mapPeerFile maps n bytes at off of the file the peer pid holds open as
// f.FD. The peer is our child, so /proc lets us open its descriptors; the
// device and inode check makes sure the number still names that file.
func mapPeerFile(pid int, f fileID, off int64, n uint64) (*mapping, error) {
	if n == 0 || off < 0 || n > uint64(maxInt) {
		return nil, provider.Errorf(provider.ErrInvalid, "cannot map %d bytes at %d", n, off)
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/fd/%d", pid, f.FD), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, provider.Errorf(provider.ErrNoMemory, "open fd %d of peer %d: %v", f.FD, pid, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, provider.Errorf(provider.ErrNoMemory, "fstat fd %d of peer %d: %v", f.FD, pid, err)
	}
	if st.Dev != f.Dev || st.Ino != f.Ino {
		return nil, provider.Errorf(provider.ErrNotFound, "fd %d of peer %d is no longer the file it named", f.FD, pid)
	}
	if uint64(st.Size) < uint64(off)+n {
		return nil, provider.Errorf(provider.ErrInvalid, "peer file of %d bytes has no %d bytes at %d", st.Size, n, off)
	}
	// Huge-page files only map in whole huge pages; their block size says
	// how large those are.
	align := int64(unix.Getpagesize())
	if b := int64(st.Blksize); b > align && b&(b-1) == 0 {
		align = b
	}
	start := off &^ (align - 1)
	length := (off - start + int64(n) + align - 1) &^ (align - 1)
	whole, err := unix.Mmap(fd, start, int(length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, provider.Errorf(provider.ErrNoMemory, "map %d bytes of peer %d: %v", length, pid, err)
	}
	lo := off - start
	return &mapping{whole: whole, mem: whole[lo : lo+int64(n) : lo+int64(n)]}, nil
}

const maxInt = int(^uint(0) >> 1)

// callerMem is the peer's side of Peer.CallerMemory: a memfd it maps and
// registers ranges of as ordinary caller memory.
type callerMem struct {
	file fileID
	mem  []byte
}

func newCallerMem(n int) (*callerMem, error) {
	if n <= 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "caller memory of %d bytes", n)
	}
	page := unix.Getpagesize()
	if n > maxInt-page {
		return nil, provider.Errorf(provider.ErrNoMemory, "caller memory of %d bytes", n)
	}
	size := (n + page - 1) &^ (page - 1)
	fd, err := unix.MemfdCreate("urma-remote-caller", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, provider.Errorf(provider.ErrNoMemory, "memfd_create: %v", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrNoMemory, "size caller memory to %d bytes: %v", size, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrNoMemory, "map caller memory: %v", err)
	}
	id, err := identify(fd)
	if err != nil {
		_ = unix.Munmap(mem)
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrNoMemory, "fstat caller memory: %v", err)
	}
	// The fd stays open for the life of the peer: the test process opens it
	// through /proc after this reply, and the peer cannot know when.
	return &callerMem{file: id, mem: mem[:n:n]}, nil
}
