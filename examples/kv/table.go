package main

import (
	"encoding/binary"
	"sync"
)

// table is the store: a hash table of 16-byte keys split into shards, each
// a map behind its own lock, so that workers serving different keys rarely
// meet. Values are copied in and out: the table never holds memory the
// network can write.
type table struct {
	shards [tableShards]shard
}

const tableShards = 64

type shard struct {
	mu sync.RWMutex
	m  map[[keySize]byte][]byte
	_  [32]byte // pads a shard to 64 bytes: neighbouring locks do not share a cache line
}

func newTable() *table {
	t := &table{}
	for i := range t.shards {
		t.shards[i].m = make(map[[keySize]byte][]byte)
	}
	return t
}

func (t *table) shard(k *[keySize]byte) *shard {
	h := binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])
	h *= 0x9e3779b97f4a7c15
	return &t.shards[h>>58]
}

// get copies the value of k into dst and returns its length and stOK,
// or stNotFound, or stTooBig if the value does not fit dst.
func (t *table) get(k *[keySize]byte, dst []byte) (int, byte) {
	s := t.shard(k)
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[*k]
	switch {
	case !ok:
		return 0, stNotFound
	case len(v) > len(dst):
		return 0, stTooBig
	}
	return copy(dst, v), stOK
}

// put stores a copy of v under k, reusing the old value's memory when it
// is large enough (get copies under the lock, so nobody holds it).
func (t *table) put(k *[keySize]byte, v []byte) {
	s := t.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.m[*k]
	if cap(old) < len(v) {
		old = make([]byte, len(v))
	}
	old = old[:len(v)]
	copy(old, v)
	s.m[*k] = old
}

// len counts the keys.
func (t *table) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
