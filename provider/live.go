package provider

import "sync/atomic"

// Live is what the providers of this process hold open: contexts, and the
// objects (segments, imports, queues, JFCs, JFCEs, jetties) created in them.
// Test mains compare it before and after a run to find leaks; an object
// that outlives its test holds memory, descriptors or a peer's resources.
type Live struct {
	Contexts int64
	Objects  int64
}

var liveContexts, liveObjects atomic.Int64

// CountContexts adds delta to the live contexts. Providers call it with 1
// when a context opens and -1 when it closes, exactly once each.
func CountContexts(delta int) { liveContexts.Add(int64(delta)) }

// CountObjects adds delta to the live objects. Providers call it when a
// context adopts an object and when the object, or its context, goes away.
func CountObjects(delta int) { liveObjects.Add(int64(delta)) }

// LiveNow returns the live contexts and objects of every provider in this
// process.
func LiveNow() Live { return Live{Contexts: liveContexts.Load(), Objects: liveObjects.Load()} }
