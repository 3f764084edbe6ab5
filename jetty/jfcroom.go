package jetty

import (
	"errors"
	"sync"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// jfcRoom is a JFC's account of the queues that complete into it: every
// request a JFS holds and every receive a JFR holds can make a record, so
// the sum of their depths must fit the JFC's depth, or records are lost
// (a JFC_ERR async event is all that says so). New queues that would not
// fit are refused where they are made, unless JFCConfig.AllowOverrun.
type jfcRoom struct {
	mu      sync.Mutex
	used    int
	overrun bool
}

// take accounts for a queue of depth that completes into j, or refuses it
// with the numbers: what the JFC holds, what it already takes, and what
// the new queue (what) would need.
func (j *JFC) take(depth int, what string) error {
	r := &j.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if size := j.p.Depth(); !r.overrun && r.used+depth > size {
		return provider.Errorf(urma.ErrInvalid,
			"a JFC of depth %d already takes the records of queues of depth %d in all, and a %s of depth %d would need %d: "+
				"give the JFC a depth of at least %d (or set JFCConfig.AllowOverrun, and lose records when it overflows)",
			size, r.used, what, depth, r.used+depth, r.used+depth)
	}
	r.used += depth
	return nil
}

// give returns what take accounted for.
func (j *JFC) give(depth int) {
	r := &j.room
	r.mu.Lock()
	r.used -= depth
	r.mu.Unlock()
}

// closeQueue closes a queue whose depth completes into jfc and gives its
// room back once it is closed (ErrClosed: its context closed it already).
func closeQueue(closeFn func() error, jfc *JFC, depth int) func() error {
	return func() error {
		if err := closeFn(); err != nil && !errors.Is(err, urma.ErrClosed) {
			return err
		}
		if jfc != nil {
			jfc.give(depth)
		}
		return nil
	}
}
