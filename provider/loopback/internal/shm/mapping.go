package shm

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/rules"
)

// Mapping is a memfd-backed shared mapping. The fd is kept so that another
// process can map the same pages later.
type Mapping struct {
	fd  int
	mem []byte
}

func pageRound(n uint64, page uint64) uint64 { return (n + page - 1) &^ (page - 1) }

// NewMapping creates a memfd of size bytes (rounded up to whole pages) and
// maps it shared. With huge it tries huge pages first and falls back.
func NewMapping(name string, size uint64, huge bool) (*Mapping, error) {
	if huge {
		if m, err := mapMemfd(name, pageRound(size, 2<<20), unix.MFD_HUGETLB); err == nil {
			return m, nil
		}
	}
	return mapMemfd(name, pageRound(size, uint64(unix.Getpagesize())), 0)
}

// seals fix the size of every memfd this provider shares: a peer that maps
// one can then never touch a page past its end, which would kill it with
// SIGBUS, whatever the owner does later.
const seals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

func mapMemfd(name string, size uint64, flags int) (*Mapping, error) {
	fd, err := unix.MemfdCreate("urma-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|flags)
	if err != nil {
		return nil, rules.Resource("memfd_create", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrNoMemory, "ftruncate memfd to %d bytes: %v", size, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrNoMemory, "seal memfd: %v", err)
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrNoMemory, "mmap %d bytes: %v", size, err)
	}
	return &Mapping{fd: fd, mem: mem}, nil
}

// AttachMapping maps size bytes of a memfd received from another process
// for reading and writing. It takes ownership of fd and closes it: the
// mapping alone keeps the memory alive. The memfd must hold size bytes and
// be sealed against shrinking: a peer that declared more than it has, or
// cut its memory afterwards, would otherwise crash this process (SIGBUS)
// on access.
func AttachMapping(fd int, size uint64) (*Mapping, error) {
	if !openForWriting(fd) {
		unix.Close(fd)
		return nil, provider.Errorf(provider.ErrInvalid, "a peer's memory came read-only where it must be written")
	}
	return mapPeer(fd, size, unix.PROT_READ|unix.PROT_WRITE)
}

// AttachMemory is AttachMapping for memory the peer may have shared
// read-only: a memfd opened only for reading is mapped only for reading,
// and writable says which it was.
func AttachMemory(fd int, size uint64) (m *Mapping, writable bool, err error) {
	prot := unix.PROT_READ
	if writable = openForWriting(fd); writable {
		prot |= unix.PROT_WRITE
	}
	m, err = mapPeer(fd, size, prot)
	return m, writable, err
}

// AttachReadOnly maps size bytes of a peer's memfd for reading only,
// however the peer opened it.
func AttachReadOnly(fd int, size uint64) (*Mapping, error) {
	return mapPeer(fd, size, unix.PROT_READ)
}

// openForWriting reports whether fd was opened for reading and writing.
func openForWriting(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE == unix.O_RDWR
}

// mapPeer checks a peer's memfd (checkPeerMemfd) and maps size bytes of it
// with prot. It takes ownership of fd and closes it.
func mapPeer(fd int, size uint64, prot int) (*Mapping, error) {
	defer unix.Close(fd)
	if err := checkPeerMemfd(fd, size); err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(fd, 0, int(size), prot, unix.MAP_SHARED)
	if err != nil {
		return nil, rules.Resource(fmt.Sprintf("mmap %d bytes of a peer's memory", size), err)
	}
	return &Mapping{fd: -1, mem: mem}, nil
}

// Bytes returns the mapped memory; nil once the mapping is closed.
func (m *Mapping) Bytes() []byte { return m.mem }

// FD returns the memfd of a mapping this process created, to pass to a
// peer; -1 for a peer's memory that this process attached.
func (m *Mapping) FD() int { return m.fd }

// Close unmaps the memory and closes the memfd, if this process made it.
// It is idempotent and nil-safe.
func (m *Mapping) Close() {
	if m == nil || m.mem == nil {
		return
	}
	_ = unix.Munmap(m.mem)
	if m.fd >= 0 {
		_ = unix.Close(m.fd)
	}
	m.mem = nil
}

func checkPeerMemfd(fd int, size uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return provider.Errorf(provider.ErrInvalid, "a peer's memory: fstat: %v", err)
	}
	if st.Size < 0 || uint64(st.Size) < size {
		return provider.Errorf(provider.ErrInvalid, "a peer's memory is %d bytes, not the %d it declared", st.Size, size)
	}
	got, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || got&unix.F_SEAL_SHRINK == 0 {
		return provider.Errorf(provider.ErrInvalid, "a peer's memory is not sealed against shrinking (seals %#x, %v)", got, err)
	}
	return nil
}
