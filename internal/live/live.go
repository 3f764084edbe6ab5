// Package live counts what the providers of this process hold open:
// contexts, and the objects (segments, imports, queues, JFCs, JFCEs,
// jetties) created in them. Test mains compare the counts before and after
// a run to find leaks; an object that outlives its test holds memory,
// descriptors or a peer's resources.
package live

import "sync/atomic"

// Counts are the live contexts and objects of every provider.
type Counts struct {
	Contexts int64
	Objects  int64
}

var contexts, objects atomic.Int64

// Contexts adds delta to the live contexts. Providers call it with 1 when
// a context opens and -1 when it closes, exactly once each.
func Contexts(delta int) { contexts.Add(int64(delta)) }

// Objects adds delta to the live objects. Providers call it when a
// context adopts an object and when the object, or its context, goes away.
func Objects(delta int) { objects.Add(int64(delta)) }

// Now returns the live contexts and objects of every provider in this
// process.
func Now() Counts { return Counts{Contexts: contexts.Load(), Objects: objects.Load()} }
