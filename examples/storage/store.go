package main

import (
	"fmt"

	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

// store is the server's chunk store: one segment of chunks, a free list and
// an index from ID to the chunks holding its data.
type store struct {
	seg   *segment.Segment
	free  []int
	index map[uint64]object
	// view moves RDMA payloads in and out of chunks, configured per
	// request over the request's chunks.
	view *view.View
}

// object is what an ID stores.
type object struct {
	chunks []int
	size   int
}

func newStore(ctx *urma.Context, chunks int) (*store, error) {
	if chunks <= 0 {
		return nil, fmt.Errorf("a store of %d chunks", chunks)
	}
	s := &store{index: map[uint64]object{}}
	var err error
	if s.seg, err = segment.Alloc(ctx, uint64(chunks)*chunkSize, segment.Config{Access: segment.LocalOnly}); err != nil {
		return nil, err
	}
	for i := chunks - 1; i >= 0; i-- {
		s.free = append(s.free, i)
	}
	// A first configuration; every RDMA request configures its own.
	if s.view, err = view.New(ctx, s.viewConfig([]int{0})); err != nil {
		_ = s.seg.Close()
		return nil, err
	}
	return s, nil
}

func (s *store) close() error {
	if s == nil {
		return nil
	}
	return joinErr(s.view.Close(), s.seg.Close())
}

// viewConfig lays the chunks out as one stream of 4096-byte protected
// blocks: a list of (data, metadata) pieces, one pair per chunk, since a
// request's chunks need not be next to each other. Memory and wire both
// carry the CRCs, so a transfer checks them and passes them through.
func (s *store) viewConfig(chunks []int) view.Config {
	l := view.Layout{}
	for _, c := range chunks {
		off := uint64(c) * chunkSize
		l.Entries = append(l.Entries,
			view.LayoutEntry{Mem: s.seg, Off: off, Bytes: chunkData},
			view.LayoutEntry{Mem: s.seg, Off: off + chunkData, Bytes: chunkMeta})
	}
	return view.Config{Layout: l, Memory: chunkSig, Wire: chunkSig}
}

// alloc takes n free chunks.
func (s *store) alloc(n int) ([]int, bool) {
	if n > len(s.free) {
		return nil, false
	}
	c := append([]int{}, s.free[len(s.free)-n:]...)
	s.free = s.free[:len(s.free)-n]
	return c, true
}

func (s *store) release(chunks []int) { s.free = append(s.free, chunks...) }

// commit makes chunks the data of id, freeing what id held before.
func (s *store) commit(id uint64, chunks []int, size int) {
	if old, ok := s.index[id]; ok {
		s.release(old.chunks)
	}
	s.index[id] = object{chunks: chunks, size: size}
}

func (s *store) chunk(c int) []byte {
	return s.seg.Bytes()[c*chunkSize : (c+1)*chunkSize]
}

// putInline stores a small payload that came in the request: one chunk,
// data padded with zeros, its metadata, and the CRC32 computed as the data
// is copied in (Signature.Insert, one pass).
func (s *store) putInline(id uint64, payload []byte) byte {
	chunks, ok := s.alloc(1)
	if !ok {
		return statusNoSpace
	}
	var plain [view.BlockChunk]byte
	copy(plain[:], payload)
	putMeta(plain[chunkData:], id)
	if err := chunkSig.Insert(s.chunk(chunks[0]), plain[:]); err != nil {
		s.release(chunks)
		return statusBadReq
	}
	s.commit(id, chunks, len(payload))
	return statusOK
}

// getInline returns a small object's data, its chunk's CRC checked as the
// data is copied out (Signature.Strip).
func (s *store) getInline(o object, dst []byte) ([]byte, byte) {
	var plain [view.BlockChunk]byte
	if err := chunkSig.Strip(plain[:], s.chunk(o.chunks[0])); err != nil {
		return nil, statusCorrupted
	}
	return dst[:copy(dst, plain[:o.size])], statusOK
}
