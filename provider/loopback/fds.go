package loopback

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// resourceErr is the error of a system call that made a descriptor or
// memory and failed: running out of descriptors is ErrAgain, said as
// such, not ErrNoMemory, so that the user looks at the right limit.
func resourceErr(op string, err error) error {
	if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
		return provider.Errorf(provider.ErrAgain, "%s: out of file descriptors (%v)", op, err)
	}
	return provider.Errorf(provider.ErrNoMemory, "%s: %v", op, err)
}

func dupFD(fd int) (int, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, resourceErr("dup", err)
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
		return -1, resourceErr("reopen memfd read-only", err)
	}
	return d, nil
}
