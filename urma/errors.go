package urma

import "github.com/urma-go/sdk/provider"

// Sentinel errors. Every error of the SDK wraps one of them; errors.Is works
// the same with every provider. Each is also a Status, so errors.Is matches
// the syscall.Errno of the same value.
var (
	// ErrNotSupported is the root of everything a provider or device cannot do.
	ErrNotSupported = provider.ErrNotSupported
	// ErrAgain: a queue is full or the operation must be retried.
	ErrAgain = provider.ErrAgain
	// ErrNoMemory: memory or a resource limit (RLIMIT_MEMLOCK) ran out.
	ErrNoMemory = provider.ErrNoMemory
	// ErrPermission: a wrong token, or access the segment does not grant.
	ErrPermission = provider.ErrPermission
	// ErrTimeout: a wait timed out.
	ErrTimeout = provider.ErrTimeout
	// ErrInvalid: a bad argument or configuration.
	ErrInvalid = provider.ErrInvalid
	// ErrExist: the object already exists.
	ErrExist = provider.ErrExist
	// ErrInProgress: an asynchronous operation has not finished.
	ErrInProgress = provider.ErrInProgress
	// ErrFail: URMA_FAIL, a failure without a more precise status.
	ErrFail = provider.ErrFail
	// ErrNotFound: no such device, EID, segment or jetty.
	ErrNotFound = provider.ErrNotFound
	// ErrBusy: the object is in use, e.g. it has unacknowledged events.
	ErrBusy = provider.ErrBusy
	// ErrClosed: the object or its context was closed.
	ErrClosed = provider.ErrClosed
	// ErrBadState: the queue is not in a state that allows the operation.
	ErrBadState = provider.ErrBadState
	// ErrRange: an address range lies outside its segment.
	ErrRange = provider.ErrRange
	// ErrSignature: a block signature does not match its data.
	ErrSignature = provider.ErrSignature
)

// OpError is the error of a failed operation; it unwraps to the cause.
type OpError struct {
	Op  string // e.g. "segment import", "jfs post"
	Obj string // optional object description, e.g. "jfs 3"
	Err error
}

// Error formats the operation, the object and the cause.
func (e *OpError) Error() string {
	if e.Obj != "" {
		return "urma: " + e.Op + " " + e.Obj + ": " + e.Err.Error()
	}
	return "urma: " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the cause, so errors.Is and errors.As see the status.
func (e *OpError) Unwrap() error { return e.Err }

// StatusOf returns the URMA status an error carries (StatusSuccess for nil,
// StatusFail for errors without one).
func StatusOf(err error) Status { return Status(provider.StatusOf(err)) }

// SetLog installs a log function for messages at level or more severe; nil
// turns logging off (the default).
func SetLog(fn func(level LogLevel, msg string), level LogLevel) {
	if fn == nil {
		provider.SetLog(nil, provider.LogLevel(level))
		return
	}
	provider.SetLog(func(l provider.LogLevel, msg string) { fn(LogLevel(l), msg) }, provider.LogLevel(level))
}
