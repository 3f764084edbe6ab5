package view

import (
	"iter"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
)

// Memory is what a layout entry points into: a local *Segment, or an
// imported *Target for the remote side of a transfer.
type Memory interface {
	Len() uint64
	RawMem() provider.MemRef
}

// LayoutEntry is one piece of a Layout: Bytes bytes at offset Off of Mem.
// In an interleaved layout, Skip bytes follow them before the entry's next
// repetition starts.
type LayoutEntry struct {
	Mem   Memory
	Off   uint64
	Bytes uint32
	Skip  uint32
}

// Layout describes a view over registered memory as one contiguous
// stream, the way an mlx5 UMR memory key does. The list form is entries
// taken once, in order (Repeat 0 or 1, no Skip). The interleaved form
// ("strided repeated block") takes all entries Repeat times: in
// repetition r, entry i covers Bytes bytes from Off + r*(Bytes+Skip).
// The storage example's [data|metadata][data|metadata]... is two entries,
// {data, 4048, skip 48} and {metadata, 48, skip 4048} over one segment.
type Layout struct {
	Entries []LayoutEntry
	Repeat  int
}

// Piece is a contiguous part of a layout's stream.
type Piece struct {
	Mem Memory
	Off uint64
	Len uint32
}

func (l *Layout) repeat() int {
	if l.Repeat == 0 {
		return 1
	}
	return l.Repeat
}

// Len is the length of the stream.
func (l *Layout) Len() uint64 {
	var per uint64
	for _, e := range l.Entries {
		per += uint64(e.Bytes)
	}
	return per * uint64(l.repeat())
}

// Validate checks that the layout has entries, that each names memory,
// and that every repetition of every entry lies inside its memory.
func (l *Layout) Validate() error {
	switch {
	case len(l.Entries) == 0:
		return provider.Errorf(provider.ErrInvalid, "layout has no entries")
	case l.Repeat < 0:
		return provider.Errorf(provider.ErrInvalid, "layout repeat %d", l.Repeat)
	}
	r := uint64(l.repeat())
	for i, e := range l.Entries {
		if e.Mem == nil {
			return provider.Errorf(provider.ErrInvalid, "layout entry %d has no memory", i)
		}
		if e.Bytes == 0 {
			return provider.Errorf(provider.ErrInvalid, "layout entry %d is empty", i)
		}
		stride := uint64(e.Bytes) + uint64(e.Skip)
		end := e.Off + (r-1)*stride + uint64(e.Bytes) // the last repetition's end
		if end < e.Off || end > e.Mem.Len() {
			return provider.Errorf(provider.ErrRange, "layout entry %d (offset %d, %d bytes, skip %d, %d times) ends at %d, past its memory's %d bytes",
				i, e.Off, e.Bytes, e.Skip, r, end, e.Mem.Len())
		}
	}
	return nil
}

// Pieces yields the stream's parts in order.
func (l *Layout) Pieces() iter.Seq[Piece] {
	return func(yield func(Piece) bool) {
		for r := 0; r < l.repeat(); r++ {
			for _, e := range l.Entries {
				off := e.Off + uint64(r)*(uint64(e.Bytes)+uint64(e.Skip))
				if !yield(Piece{Mem: e.Mem, Off: off, Len: e.Bytes}) {
					return
				}
			}
		}
	}
}

// localBytes returns the bytes of a piece of local memory.
func localBytes(p Piece) ([]byte, error) {
	s, ok := p.Mem.(*segment.Segment)
	if !ok {
		return nil, provider.Errorf(provider.ErrInvalid, "layout over imported memory: its bytes move only by WRITE and READ")
	}
	b := s.Bytes()
	if b == nil {
		return nil, provider.Errorf(provider.ErrClosed, "segment of the layout is unregistered")
	}
	return b[p.Off : p.Off+uint64(p.Len)], nil
}

// Gather copies the stream into dst, which must be Len bytes. Every entry
// must be a local *Segment.
func (l *Layout) Gather(dst []byte) error { return l.copyStream(dst, false) }

// Scatter copies src, which must be Len bytes, into the stream's memory.
// Every entry must be a local *Segment.
func (l *Layout) Scatter(src []byte) error { return l.copyStream(src, true) }

// copyStream copies between buf and the stream: into the memory when
// toMem, out of it otherwise.
func (l *Layout) copyStream(buf []byte, toMem bool) error {
	if err := l.checkCopy(len(buf)); err != nil {
		return err
	}
	n := 0
	for p := range l.Pieces() {
		b, err := localBytes(p)
		if err != nil {
			return err
		}
		if toMem {
			n += copy(b, buf[n:])
		} else {
			n += copy(buf[n:], b)
		}
	}
	return nil
}

func (l *Layout) checkCopy(n int) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if uint64(n) != l.Len() {
		return provider.Errorf(provider.ErrInvalid, "buffer of %d bytes for a layout of %d", n, l.Len())
	}
	return nil
}
