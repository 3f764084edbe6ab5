//go:build cgo && urma_verbs

package ib

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// verbsErr wraps a verbs or rdma_cm failure in the sentinel its errno
// means, keeping the verbs text.
func verbsErr(what string, err error) error {
	var no syscall.Errno
	if !errors.As(err, &no) {
		return provider.Errorf(provider.ErrFail, "%s: %v", what, err)
	}
	var s error
	switch no {
	case syscall.ENOMEM, syscall.ENOSPC:
		return provider.Errorf(provider.ErrNoMemory, "%s: %v%s", what, err, memlockHint())
	case syscall.EINVAL:
		s = provider.ErrInvalid
	case syscall.EAGAIN, syscall.EBUSY:
		s = provider.ErrAgain
	case syscall.ENODEV, syscall.ENOENT, syscall.ENXIO, syscall.EADDRNOTAVAIL, syscall.ECONNREFUSED,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH:
		s = provider.ErrNotFound
	case syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EPROTONOSUPPORT, syscall.EAFNOSUPPORT:
		s = provider.ErrNotSupported
	case syscall.EPERM, syscall.EACCES:
		s = provider.ErrPermission
	case syscall.ETIMEDOUT:
		s = provider.ErrTimeout
	case syscall.EADDRINUSE, syscall.EEXIST:
		s = provider.ErrExist
	default:
		s = provider.ErrFail
	}
	return provider.Errorf(s, "%s: %v", what, err)
}

// memlockHint explains the usual cause of ENOMEM from the verbs: pinned
// memory counts against RLIMIT_MEMLOCK, 8 MiB by default on many systems.
func memlockHint() string {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r); err != nil || r.Cur == unix.RLIM_INFINITY {
		return ""
	}
	return fmt.Sprintf(" (RLIMIT_MEMLOCK is %d bytes: registered memory, queues and CQs are pinned and count against it; raise it with `ulimit -l unlimited` or LimitMEMLOCK= in a systemd unit)", r.Cur)
}
