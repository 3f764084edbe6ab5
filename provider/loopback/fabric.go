package loopback

import (
	"sync"

	"github.com/urma-go/sdk/provider"
)

// The fabric is how contexts of this process find each other: by EID and
// UASID, as a UB address names a process's address space. Contexts of other
// processes are found through the runtime directory instead (see peer.go).
var fabric struct {
	mu   sync.RWMutex
	ctxs map[fabricKey]*lbContext
}

type fabricKey struct {
	eid   provider.EID
	uasid uint32
}

// fabricAdd records c unless its key is taken, which a random UASID makes
// all but impossible; false asks the caller to draw another.
func fabricAdd(c *lbContext) bool {
	fabric.mu.Lock()
	defer fabric.mu.Unlock()
	if fabric.ctxs == nil {
		fabric.ctxs = map[fabricKey]*lbContext{}
	}
	k := fabricKey{c.eid, c.uasid}
	if fabric.ctxs[k] != nil {
		return false
	}
	fabric.ctxs[k] = c
	return true
}

func fabricRemove(c *lbContext) {
	fabric.mu.Lock()
	defer fabric.mu.Unlock()
	if fabric.ctxs[fabricKey{c.eid, c.uasid}] == c {
		delete(fabric.ctxs, fabricKey{c.eid, c.uasid})
	}
}

// fabricFind returns the context of this process at eid and uasid, or nil.
func fabricFind(eid provider.EID, uasid uint32) *lbContext {
	fabric.mu.RLock()
	defer fabric.mu.RUnlock()
	return fabric.ctxs[fabricKey{eid, uasid}]
}
