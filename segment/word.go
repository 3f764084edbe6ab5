package segment

import (
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Uint64 returns the 8 bytes at off of the segment as an atomic word: the
// way to read or change, from this process, a value that peers update
// with remote atomics (FetchAdd, CompareSwap), or that a remote atomic's
// old value lands in. The word is in host byte order, as URMA's atomics
// use. off must be a multiple of 8 with the word inside the segment. Like
// Bytes, the word is valid until Unregister.
func (s *Segment) Uint64(off uint64) (*atomic.Uint64, error) {
	b := s.p.Bytes()
	if off%8 != 0 || off > uint64(len(b)) || uint64(len(b))-off < 8 {
		return nil, &urma.OpError{Op: "segment word", Err: provider.Errorf(urma.ErrRange,
			"8 bytes at offset %d of a %d-byte segment, at a multiple of 8", off, len(b))}
	}
	p := unsafe.Pointer(&b[off])
	if uintptr(p)%8 != 0 {
		return nil, &urma.OpError{Op: "segment word", Err: provider.Errorf(urma.ErrInvalid,
			"the segment's memory at offset %d is not 8-byte aligned", off)}
	}
	return (*atomic.Uint64)(p), nil
}
