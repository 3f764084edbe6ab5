// Package objtab is a context's table of the objects it closes with itself,
// and the order it closes them in, shared by the providers so that every
// one tears a context down the way URMA prescribes.
package objtab

import (
	"iter"
	"slices"
)

// Ranks order a context's teardown: jetties and send queues first (they
// name receive queues, JFCs and memory), then receive queues, then JFCs,
// then JFCEs, then memory and imports.
const (
	RankSend   = 0
	RankRecv   = 1
	RankJFC    = 2
	RankJFCE   = 3
	RankMemory = 4
)

type entry[T comparable] struct {
	obj  T
	rank int
}

// Table holds a context's objects in the order they were added. It has no
// lock of its own: the context's lock guards it.
type Table[T comparable] struct {
	items []entry[T]
}

// Add records o with its rank.
func (t *Table[T]) Add(o T, rank int) { t.items = append(t.items, entry[T]{o, rank}) }

// Remove forgets o and reports whether the table held it.
func (t *Table[T]) Remove(o T) bool {
	for i := range t.items {
		if t.items[i].obj == o {
			t.items = slices.Delete(t.items, i, i+1)
			return true
		}
	}
	return false
}

// Contains reports whether the table holds o.
func (t *Table[T]) Contains(o T) bool {
	for i := range t.items {
		if t.items[i].obj == o {
			return true
		}
	}
	return false
}

// Len is the number of objects held.
func (t *Table[T]) Len() int { return len(t.items) }

// All yields the objects in the order they were added.
func (t *Table[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, e := range t.items {
			if !yield(e.obj) {
				return
			}
		}
	}
}

// Drain empties the table and returns its objects in teardown order: by
// rank, and newest first within a rank (a later object may use an earlier
// one of its rank, as a Jetty may share a JFR).
func (t *Table[T]) Drain() []T {
	items := t.items
	t.items = nil
	out := make([]T, 0, len(items))
	for rank := RankSend; rank <= RankMemory; rank++ {
		for i := len(items) - 1; i >= 0; i-- {
			if items[i].rank == rank {
				out = append(out, items[i].obj)
			}
		}
	}
	for i := len(items) - 1; i >= 0; i-- { // ranks outside the list go last
		if items[i].rank < RankSend || items[i].rank > RankMemory {
			out = append(out, items[i].obj)
		}
	}
	return out
}
