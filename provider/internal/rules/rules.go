// Package rules holds the errors every provider gives for the same
// mistakes, so that a program sees one text and one sentinel whatever
// device it runs on: a closed object, a request whose target does not fit
// its queue, a system out of descriptors.
package rules

import (
	"errors"
	"syscall"

	"github.com/urma-go/sdk/provider"
)

// Resource is the error of a system call that makes a descriptor or
// memory and failed with err: running out of descriptors is ErrAgain, said
// as such, not ErrNoMemory, so that the user looks at the right limit.
func Resource(op string, err error) error {
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return provider.Errorf(provider.ErrAgain, "%s: out of file descriptors (%v)", op, err)
	}
	return provider.Errorf(provider.ErrNoMemory, "%s: %v", op, err)
}

// Closed is the error of an operation on a closed object.
func Closed(what string) error { return provider.Errorf(provider.ErrClosed, "%s is closed", what) }

// NotBound is the error of a request on an RC Jetty that is not bound.
func NotBound() error {
	return provider.Errorf(provider.ErrInvalid, "RC jetty is not bound: Bind it to the peer's Jetty first")
}

// BoundElsewhere is the error of a request on an RC Jetty bound to
// bound that names another target.
func BoundElsewhere(bound provider.JettyID) error {
	return provider.Errorf(provider.ErrInvalid, "RC jetty is bound to %v, request names another target", bound)
}

// NoTarget is the error of a request without a target on a queue of mode.
// One-sided requests name one too: the peer's JFR or Jetty they go
// through, besides the segment they touch.
func NoTarget(op provider.Opcode, mode provider.TransportMode) error {
	return provider.Errorf(provider.ErrInvalid,
		"%v in %v mode needs WR.To, the peer's imported JFR or Jetty (one-sided requests too: import it besides the segment)", op, mode)
}

// ModeMismatch is the error of a request whose target's transport mode is
// not its queue's.
func ModeMismatch(target, queue provider.TransportMode) error {
	return provider.Errorf(provider.ErrInvalid, "target is %v, queue is %v", target, queue)
}

// AdviseRC is the error of Advise on an RC queue: it reaches its one peer
// through Bind.
func AdviseRC() error {
	return provider.Errorf(provider.ErrInvalid, "RC jetties Bind, they do not Advise")
}
