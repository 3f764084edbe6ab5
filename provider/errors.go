package provider

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// Status is a URMA status code (urma_status_t): 0 for success, a positive
// errno value, or StatusFail. A Status is an error, so providers and the SDK
// return the sentinels below, wrapped with Errorf and in urma.OpError.
type Status int32

// URMA status values. The errno-valued ones carry the Linux errno numbers, as
// urma_status_t does.
const (
	StatusSuccess      Status = 0
	StatusAgain        Status = Status(syscall.EAGAIN)
	StatusNoMemory     Status = Status(syscall.ENOMEM)
	StatusPermission   Status = Status(syscall.EPERM)
	StatusTimeout      Status = Status(syscall.ETIMEDOUT)
	StatusInvalid      Status = Status(syscall.EINVAL)
	StatusExist        Status = Status(syscall.EEXIST)
	StatusInProgress   Status = Status(syscall.EINPROGRESS)
	StatusFail         Status = 0x1000
	StatusNotSupported Status = Status(syscall.EOPNOTSUPP)
	StatusNotFound     Status = Status(syscall.ENOENT)
	StatusBusy         Status = Status(syscall.EBUSY)
	StatusClosed       Status = Status(syscall.EBADF)
	StatusBadState     Status = Status(syscall.EBADFD)
	StatusRange        Status = Status(syscall.ERANGE)
	// StatusSignature is a block signature that does not match its data.
	StatusSignature Status = Status(syscall.EBADMSG)
)

// The sentinel errors. Every error the SDK returns wraps one of them, so
// errors.Is(err, urma.ErrAgain) works whatever the provider.
var (
	// ErrNotSupported is the root of everything a provider or device cannot do.
	ErrNotSupported error = StatusNotSupported
	ErrAgain        error = StatusAgain
	ErrNoMemory     error = StatusNoMemory
	ErrPermission   error = StatusPermission
	ErrTimeout      error = StatusTimeout
	ErrInvalid      error = StatusInvalid
	ErrExist        error = StatusExist
	ErrInProgress   error = StatusInProgress
	ErrFail         error = StatusFail
	ErrNotFound     error = StatusNotFound
	ErrBusy         error = StatusBusy
	ErrClosed       error = StatusClosed
	ErrBadState     error = StatusBadState
	ErrRange        error = StatusRange
	// ErrSignature: a block signature check failed (see view.SigError).
	ErrSignature error = StatusSignature
)

// ErrUnreadRecords is what JFC.Rearm returns while records wait to be
// polled. It is one value, so that the race it reports, which an event
// loop meets often, costs no allocation.
var ErrUnreadRecords = Errorf(ErrAgain, "jfc has unread records; poll them first")

var statusText = map[Status]string{
	StatusSuccess:      "success",
	StatusAgain:        "resource temporarily unavailable",
	StatusNoMemory:     "out of memory",
	StatusPermission:   "permission denied",
	StatusTimeout:      "timed out",
	StatusInvalid:      "invalid argument",
	StatusExist:        "already exists",
	StatusInProgress:   "in progress",
	StatusFail:         "failed",
	StatusNotSupported: "not supported",
	StatusNotFound:     "not found",
	StatusBusy:         "busy",
	StatusClosed:       "closed",
	StatusBadState:     "object in wrong state",
	StatusRange:        "out of range",
	StatusSignature:    "signature mismatch",
}

// Error returns the text of the status.
func (s Status) Error() string {
	if t, ok := statusText[s]; ok {
		return t
	}
	return fmt.Sprintf("urma status %d", int32(s))
}

// Is lets errors.Is match a Status against the syscall.Errno of the same
// value, so callers that think in errno terms are served too, and
// StatusClosed against net.ErrClosed, the standard library's error for a
// use of something closed (a Close during a wait included).
func (s Status) Is(target error) bool {
	if target == net.ErrClosed {
		return s == StatusClosed
	}
	var e syscall.Errno
	if errors.As(target, &e) {
		return s != StatusFail && int32(e) == int32(s)
	}
	return false
}

// Errorf wraps a sentinel with a detail message: errors.Is(err, sentinel) holds
// and the text reads "detail: sentinel text".
func Errorf(sentinel error, format string, args ...any) error {
	return &detailError{msg: fmt.Sprintf(format, args...), err: sentinel}
}

type detailError struct {
	msg string
	err error
}

// Error is "detail: sentinel text", or the detail alone when it already
// ends with the sentinel's text (a wrapped system error often does:
// "mkdir /x: permission denied" needs no second "permission denied").
func (e *detailError) Error() string {
	text := e.err.Error()
	if e.msg == text || strings.HasSuffix(e.msg, ": "+text) {
		return e.msg
	}
	return e.msg + ": " + text
}
func (e *detailError) Unwrap() error { return e.err }

// StatusOf returns the URMA status an error carries: StatusSuccess for nil,
// the wrapped Status when there is one, StatusFail otherwise.
func StatusOf(err error) Status {
	if err == nil {
		return StatusSuccess
	}
	var s Status
	if errors.As(err, &s) {
		return s
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return Status(e)
	}
	return StatusFail
}
