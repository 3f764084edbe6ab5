package shm

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMappingIsSharedMemfd(t *testing.T) {
	m, err := NewMapping("test", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.mem) != os.Getpagesize() {
		t.Fatalf("mapping is %d bytes, want one page", len(m.mem))
	}
	// A second mapping of the same fd must see the first one's writes: this
	// is what lets another process map the segment later.
	other, err := unix.Mmap(m.fd, 0, len(m.mem), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(other)
	m.mem[17] = 0xa5
	if other[17] != 0xa5 {
		t.Fatal("write through one mapping not visible through another")
	}
	var st unix.Stat_t
	if err := unix.Fstat(m.fd, &st); err != nil || st.Size != int64(len(m.mem)) {
		t.Fatalf("fstat: size %d, err %v", st.Size, err)
	}
}

// Huge pages are often not reserved on test machines; the request must then
// fall back to normal pages rather than fail.
func TestMappingHugeFallsBack(t *testing.T) {
	m, err := NewMapping("test", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.mem[0], m.mem[len(m.mem)-1] = 1, 2
	m.Close()
	if m.mem != nil {
		t.Fatal("close left the mapping in place")
	}
	m.Close() // idempotent
}

// A shared memfd is sealed: its owner cannot cut the pages a peer maps.
func TestMappingIsSealed(t *testing.T) {
	m, err := NewMapping("test", 4096, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := unix.Ftruncate(m.fd, 0); err == nil {
		t.Fatal("a shared memfd could be shrunk")
	}
	dup, err := unix.Dup(m.fd)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := AttachMapping(dup, 4096)
	if err != nil {
		t.Fatalf("attach a sealed memfd: %v", err)
	}
	peer.Close()
}

// A peer's memfd that is smaller than declared, or could shrink, is
// refused instead of mapped: touching a missing page is SIGBUS.
func TestAttachRefusesBadPeerMemory(t *testing.T) {
	unsealed, err := unix.MemfdCreate("urma-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(unsealed, 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := AttachMapping(unsealed, 4096); err == nil || !strings.Contains(err.Error(), "not sealed") {
		t.Fatalf("unsealed memfd: %v", err)
	}
	requireClosed(t, unsealed)
	m, err := NewMapping("test", 4096, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dup, err := unix.Dup(m.fd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AttachMapping(dup, 2*4096); err == nil || !strings.Contains(err.Error(), "not the 8192 it declared") {
		t.Fatalf("memfd smaller than declared: %v", err)
	}
	requireClosed(t, dup)
}

// requireClosed checks that attachMapping closed the descriptor it was
// given, refused or not.
func requireClosed(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
		t.Fatalf("fd %d left open", fd)
	}
}
