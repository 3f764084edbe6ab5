package loopback

import (
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// The fabric is how contexts find each other: by EID and UASID, as a UB
// address names a process's address space.
var fabric struct {
	mu    sync.RWMutex
	ctxs  map[fabricKey]*lbContext
	uasid atomic.Uint32
}

type fabricKey struct {
	eid   provider.EID
	uasid uint32
}

func fabricAdd(c *lbContext) {
	fabric.mu.Lock()
	defer fabric.mu.Unlock()
	if fabric.ctxs == nil {
		fabric.ctxs = map[fabricKey]*lbContext{}
	}
	fabric.ctxs[fabricKey{c.eid, c.uasid}] = c
}

func fabricRemove(c *lbContext) {
	fabric.mu.Lock()
	defer fabric.mu.Unlock()
	delete(fabric.ctxs, fabricKey{c.eid, c.uasid})
}

func fabricFind(eid provider.EID, uasid uint32) (*lbContext, error) {
	fabric.mu.RLock()
	c := fabric.ctxs[fabricKey{eid, uasid}]
	fabric.mu.RUnlock()
	if c == nil {
		return nil, provider.Errorf(provider.ErrNotFound, "no context at eid %v uasid %d", eid, uasid)
	}
	return c, nil
}
