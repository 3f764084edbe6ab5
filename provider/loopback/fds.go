package loopback

import (
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider/internal/rules"
)

func dupFD(fd int) (int, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, rules.Resource("dup", err)
	}
	return d, nil
}

// shareFD is a descriptor of the memfd fd to send to a peer: a duplicate
// when the peer may write, else a new read-only open of the same memory,
// which the peer can map only for reading.
func shareFD(fd int, writable bool) (int, error) {
	if writable {
		return dupFD(fd)
	}
	d, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, rules.Resource("reopen memfd read-only", err)
	}
	return d, nil
}
