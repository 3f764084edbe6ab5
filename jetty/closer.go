package jetty

import (
	"errors"
	"sync"

	"github.com/urma-go/sdk/urma"
)

// closer makes Close idempotent while letting a failed Close (ErrBusy: the
// object is still in use) be retried.
type closer struct {
	mu   sync.Mutex
	done bool
}

func (c *closer) close(op string, f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	if err := f(); err != nil && !errors.Is(err, urma.ErrClosed) {
		return opErr(op, err)
	}
	c.done = true
	return nil
}

func opErr(op string, err error) error {
	return &urma.OpError{Op: op, Err: err}
}
