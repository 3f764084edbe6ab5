package viewio

import (
	"encoding/binary"
	"hash/crc32"
)

// Sig is one domain's block signature. A nil Table means the domain holds
// plain data.
type Sig struct {
	Table *crc32.Table
	// Block is the number of data bytes each signature protects.
	Block int
}

func (s Sig) on() bool { return s.Table != nil }

// SigSize is the size of one block's signature.
const SigSize = 4

// stride is the size of a block in this domain's form.
func (s Sig) stride() uint64 {
	if s.on() {
		return uint64(s.Block + SigSize)
	}
	return uint64(s.Block)
}

// Mismatch is a block whose stored signature differs from its data's.
type Mismatch struct {
	Block    int
	Expected uint32 // stored with the data
	Actual   uint32 // computed from the data
}

// cursor walks a list of byte slices as one stream.
type cursor struct {
	bufs [][]byte
	i    int
	b    []byte
}

// newCursor starts at byte skip of the stream.
func newCursor(bufs [][]byte, skip uint64) cursor {
	c := cursor{bufs: bufs, i: -1}
	for skip > 0 {
		p := c.take(int(min(skip, 1<<30)))
		if p == nil {
			break
		}
		skip -= uint64(len(p))
	}
	return c
}

// take returns up to n of the stream's next bytes, contiguous, or nil at
// the end.
func (c *cursor) take(n int) []byte {
	for len(c.b) == 0 {
		c.i++
		if c.i >= len(c.bufs) {
			return nil
		}
		c.b = c.bufs[c.i]
	}
	n = min(n, len(c.b))
	p := c.b[:n]
	c.b = c.b[n:]
	return p
}

// put copies p into the stream.
func (c *cursor) put(p []byte) {
	for len(p) > 0 {
		d := c.take(len(p))
		if d == nil {
			return
		}
		p = p[copy(d, p):]
	}
}

// read fills p from the stream.
func (c *cursor) read(p []byte) {
	for len(p) > 0 {
		s := c.take(len(p))
		if s == nil {
			return
		}
		p = p[copy(p, s):]
	}
}

// transform moves n bytes of src (in src's form) to dst. When either
// domain is signed, n is whole blocks of the source form: each block's data
// is copied, its stored signature checked when in is on, and a signature
// placed after it when out is on (the stored one, passed through, when both
// domains use the same checksum). It returns the first mismatch; the data
// moves whatever the signatures say, as on the NIC.
func transform(dst, src *cursor, in, out Sig, n uint64) *Mismatch {
	if !in.on() && !out.on() {
		for n > 0 {
			p := src.take(int(min(n, 1<<30)))
			if p == nil {
				return nil
			}
			dst.put(p)
			n -= uint64(len(p))
		}
		return nil
	}
	b, stride := out.Block, uint64(out.Block) // the input is plain
	if in.on() {
		b, stride = in.Block, in.stride()
	}
	same := in.on() && out.on() && in.Table == out.Table
	var first *Mismatch
	var sig [SigSize]byte
	for k := 0; uint64(k) < n/stride; k++ {
		var ci, co uint32
		for left := b; left > 0; {
			p := src.take(left)
			if p == nil {
				return first
			}
			dst.put(p)
			if in.on() {
				ci = crc32.Update(ci, in.Table, p)
			}
			if out.on() && !same {
				co = crc32.Update(co, out.Table, p)
			}
			left -= len(p)
		}
		if in.on() {
			src.read(sig[:])
			stored := binary.BigEndian.Uint32(sig[:])
			if stored != ci && first == nil {
				first = &Mismatch{Block: k, Expected: stored, Actual: ci}
			}
			if same {
				co = stored
			}
		}
		if out.on() {
			binary.BigEndian.PutUint32(sig[:], co)
			dst.put(sig[:])
		}
	}
	return first
}
