package main

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/internal/prefetch"
)

// table is the store: a hash table of 16-byte keys split into shards, each
// behind its own lock, so that workers serving different keys rarely
// meet. A shard is open addressing with linear probing over slots of one
// cache line, which hold the key and a value of up to inlineValue bytes:
// a GET of such a value reads one line, where a Go map of slices read
// three (bucket, key, value), each a cache miss once the table outgrows
// the caches. Longer values live out of line. Values are copied in and
// out: the table never holds memory the network can write. There is no
// delete, so probing needs no tombstones.
type table struct {
	shards [tableShards]shard
}

const (
	tableShards = 64
	// inlineValue is the longest value kept in its slot.
	inlineValue = 40
	// firstSlots is a shard's size before its first growth.
	firstSlots = 64
)

type shard struct {
	mu    sync.RWMutex
	slots []slot
	// long holds the out-of-line values, by slot index.
	long [][]byte
	n    int
	// view is slots as of the last growth, for prefetch, which reads it
	// without the lock.
	view atomic.Pointer[[]slot]
	_    [40]byte // pads a shard to two cache lines: neighbouring shards share none
}

// slot is one cache line: the key, its state and an inline value.
type slot struct {
	key  [keySize]byte
	used bool
	out  bool  // the value is long[i], not val
	vlen uint8 // length of an inline value
	_    [5]byte
	val  [inlineValue]byte
}

func newTable() *table { return &table{} }

// hashKey mixes the key's two halves; its top bits pick the shard and its
// low bits the first slot.
func hashKey(k *[keySize]byte) uint64 {
	h := binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])
	h *= 0x9e3779b97f4a7c15
	return h ^ h>>29
}

func (t *table) shard(h uint64) *shard { return &t.shards[h>>58] }

// find returns the index of k's slot, or of the empty slot where it would
// go, and whether k is there.
func (s *shard) find(k *[keySize]byte, h uint64) (int, bool) {
	mask := len(s.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if !sl.used {
			return i, false
		}
		if sl.key == *k {
			return i, true
		}
	}
}

// get copies the value of k into dst and returns its length and stOK,
// or stNotFound, or stTooBig if the value does not fit dst.
func (t *table) get(k *[keySize]byte, dst []byte) (int, byte) {
	h := hashKey(k)
	s := t.shard(h)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.n == 0 {
		return 0, stNotFound
	}
	i, ok := s.find(k, h)
	if !ok {
		return 0, stNotFound
	}
	sl := &s.slots[i]
	v := sl.val[:sl.vlen]
	if sl.out {
		v = s.long[i]
	}
	if len(v) > len(dst) {
		return 0, stTooBig
	}
	return copy(dst, v), stOK
}

// prefetch asks for the line of k's first slot, so that a worker can ask
// for those of all the requests it is about to serve before it serves the
// first: each is likely a cache miss, and asked for together they overlap.
// A growth meanwhile only makes the hint useless.
func (t *table) prefetch(k *[keySize]byte) {
	h := hashKey(k)
	if v := t.shard(h).view.Load(); v != nil {
		prefetch.Read(unsafe.Pointer(&(*v)[int(h)&(len(*v)-1)]))
	}
}

// put stores a copy of v under k, reusing the old long value's memory when
// it is large enough (get copies under the lock, so nobody holds it).
func (t *table) put(k *[keySize]byte, v []byte) {
	h := hashKey(k)
	s := t.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if (s.n+1)*8 > len(s.slots)*5 {
		s.grow()
	}
	i, ok := s.find(k, h)
	sl := &s.slots[i]
	if !ok {
		sl.key, sl.used = *k, true
		s.n++
	}
	if len(v) <= inlineValue {
		sl.out, sl.vlen = false, uint8(copy(sl.val[:], v))
		s.long[i] = nil
		return
	}
	old := s.long[i]
	if cap(old) < len(v) {
		old = make([]byte, len(v))
	}
	s.long[i] = old[:copy(old[:len(v)], v)]
	sl.out, sl.vlen = true, 0
}

// grow doubles the shard (keeping at most 5/8 of the slots used, where
// linear probing stays short) and places every key again.
func (s *shard) grow() {
	old, oldLong := s.slots, s.long
	n := max(firstSlots, 2*len(old))
	s.slots, s.long = make([]slot, n), make([][]byte, n)
	view := s.slots
	s.view.Store(&view)
	for j := range old {
		if !old[j].used {
			continue
		}
		i, _ := s.find(&old[j].key, hashKey(&old[j].key))
		s.slots[i], s.long[i] = old[j], oldLong[j]
	}
}

// len counts the keys.
func (t *table) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		n += s.n
		s.mu.RUnlock()
	}
	return n
}

// The layout the comments promise.
var (
	_ [64 - unsafe.Sizeof(slot{})]byte
	_ [unsafe.Sizeof(slot{}) - 64]byte
	_ [128 - unsafe.Sizeof(shard{})]byte
	_ [unsafe.Sizeof(shard{}) - 128]byte
)
