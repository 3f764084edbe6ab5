package loopback

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMappingIsSharedMemfd(t *testing.T) {
	m, err := newMapping("test", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
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
	m, err := newMapping("test", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	m.mem[0], m.mem[len(m.mem)-1] = 1, 2
	m.close()
	if m.mem != nil {
		t.Fatal("close left the mapping in place")
	}
	m.close() // idempotent
}
