package jetty

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Caller posts one-sided atomics to one peer and waits for each: FetchAdd
// and CompareSwap return the old value, as a function call would. It owns
// a JFS, a JFC and an 8-byte result segment, so its waits take no record
// of anyone else's. It is for the occasional atomic (a counter, a lock, a
// sequence number); a loop that keeps requests in flight posts with
// JFS.FetchAdd and polls its own JFC. Its methods are safe for concurrent
// use and run one at a time.
type Caller struct {
	mu     sync.Mutex
	to     *Remote
	jfc    *JFC
	jfs    *JFS
	result *segment.Segment
	old    *atomic.Uint64
	crs    [1]CR
	// pending is set while a request whose wait was abandoned may still
	// complete: its record comes before the next request's.
	pending bool
}

// NewCaller makes a Caller for the peer's imported JFR or Jetty to (RM
// mode).
func NewCaller(uctx *urma.Context, to *Remote) (*Caller, error) {
	if to == nil {
		return nil, opErr("create caller", provider.Errorf(urma.ErrInvalid, "nil remote"))
	}
	jfc, err := NewJFC(uctx, JFCConfig{Depth: 1})
	if err != nil {
		return nil, err
	}
	jfs, err := NewJFS(uctx, JFSConfig{Depth: 1, JFC: jfc})
	if err != nil {
		_ = jfc.Close()
		return nil, err
	}
	result, err := segment.Alloc(uctx, 8, segment.Config{Access: segment.LocalOnly})
	if err != nil {
		_ = errors.Join(jfs.Close(), jfc.Close())
		return nil, err
	}
	old, err := result.Uint64(0)
	if err != nil {
		_ = errors.Join(result.Close(), jfs.Close(), jfc.Close())
		return nil, err
	}
	return &Caller{to: to, jfc: jfc, jfs: jfs, result: result, old: old}, nil
}

// FetchAdd adds add to the 8 aligned bytes of remote (a range of a
// segment.Target of the same peer) and returns their old value. It waits
// until ctx is done; a request still in flight then keeps the Caller busy
// until it completes, and its old value is lost.
func (c *Caller) FetchAdd(ctx context.Context, remote segment.SGE, add uint64) (uint64, error) {
	return c.call(ctx, func() error { return c.jfs.FetchAdd(c.to, remote, c.result.SGE(0, 8), add, 0, 0) })
}

// CompareSwap swaps the 8 aligned bytes of remote for swap if they equal
// compare, and returns their old value either way (the swap happened when
// it equals compare). It waits as FetchAdd does.
func (c *Caller) CompareSwap(ctx context.Context, remote segment.SGE, compare, swap uint64) (uint64, error) {
	return c.call(ctx, func() error {
		return c.jfs.CompareSwap(c.to, remote, c.result.SGE(0, 8), compare, swap, 0, 0)
	})
}

func (c *Caller) call(ctx context.Context, post func() error) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending {
		if _, err := c.jfc.PollWait(ctx, c.crs[:], 0); err != nil {
			return 0, err
		}
		c.pending = false
	}
	if err := post(); err != nil {
		return 0, err
	}
	c.pending = true
	if _, err := c.jfc.PollWait(ctx, c.crs[:], 0); err != nil {
		return 0, err
	}
	c.pending = false
	if err := c.crs[0].Err(); err != nil {
		// The failure put the queue in ERROR (and raised JFS_ERR on the
		// context, as any queue's does); a reset makes it usable again.
		return 0, errors.Join(err, c.jfs.Modify(urma.StateReset), c.jfs.Modify(urma.StateReady))
	}
	return c.old.Load(), nil
}

// Close releases the Caller's queue, JFC and segment. Idempotent and
// nil-safe.
func (c *Caller) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.jfs.Close(), c.jfc.Close(), c.result.Close())
}
