package jetty

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/urma"
)

// postErrors makes the *PostErrors of a queue's posts. A queue that refuses
// posts again and again because it is full (urma.ErrAgain, the ordinary
// back-pressure of a loop that posts faster than it polls) returns one
// error value each time, and the *PostError around it is then reused too:
// such a refusal allocates nothing. Every other failure gets its own.
type postErrors struct {
	last atomic.Pointer[postErrorMemo]
}

// postErrorMemo is the last refusal postErrors kept, with the two parts of
// its operation's name.
type postErrorMemo struct {
	kind, what string
	e          *PostError
}

// of returns the *PostError of a post of what on a queue of kind that
// queued n requests and failed with err.
func (c *postErrors) of(kind, what string, n int, err error) error {
	if m := c.last.Load(); m != nil && m.e.Index == n && m.kind == kind && m.what == what && sameError(m.e.Err, err) {
		return m.e
	}
	e := &PostError{Op: kind + " " + what, Index: n, Err: err}
	if errors.Is(err, urma.ErrAgain) {
		c.last.Store(&postErrorMemo{kind: kind, what: what, e: e})
	}
	return e
}

// sameError tells whether a and b are one error value: the same dynamic
// type and the same data word. Comparing the interfaces with == would
// panic on an error type that is not comparable.
func sameError(a, b error) bool {
	wa, wb := (*[2]unsafe.Pointer)(unsafe.Pointer(&a)), (*[2]unsafe.Pointer)(unsafe.Pointer(&b))
	return wa[0] == wb[0] && wa[1] == wb[1]
}
