//go:build linux && cgo && urma_verbs

package verbs

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// ErrTimeout is returned by Waiter.Wait when the deadline passes.
var ErrTimeout = errors.New("verbs: wait timed out")

// Waiter parks a goroutine in Go's netpoller until a non-blocking verbs
// descriptor (completion channel, async events, rdma_cm events) is
// readable, so a wait ties up no OS thread. It polls a duplicate of the
// descriptor: the original stays owned by verbs.
type Waiter struct {
	f  *os.File
	rc syscall.RawConn
}

// NewWaiter duplicates fd, which must be non-blocking.
func NewWaiter(fd int, name string) (*Waiter, error) {
	d, err := syscall.Dup(fd)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(d)
	f := os.NewFile(uintptr(d), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Waiter{f: f, rc: rc}, nil
}

// Wait calls try until it reports done, sleeping while the descriptor is
// not readable. A zero deadline waits until Close; try runs on the
// waiting goroutine and must not block.
func (w *Waiter) Wait(deadline time.Time, try func() bool) error {
	if try() {
		return nil
	}
	if err := w.f.SetReadDeadline(deadline); err != nil {
		return err
	}
	err := w.rc.Read(func(uintptr) bool { return try() })
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

// Close wakes every Wait with os.ErrClosed and closes the duplicate.
func (w *Waiter) Close() error { return w.f.Close() }
