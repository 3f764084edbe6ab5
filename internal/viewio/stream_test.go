package viewio

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// split cuts b into pieces of random sizes, as a layout's memory is.
func split(r *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(len(b), 1+r.IntN(700))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// protect is the reference protected form: hash/crc32 after each block,
// big-endian.
func protect(tab *crc32.Table, block int, plain []byte) []byte {
	var out []byte
	for i := 0; i < len(plain); i += block {
		out = append(out, plain[i:i+block]...)
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(plain[i:i+block], tab))
	}
	return out
}

// TestTransformPieces moves data between randomly split memory and a
// contiguous buffer in every domain combination, so that blocks and stored
// signatures straddle piece boundaries, and compares with the reference.
func TestTransformPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ieee, c := crc32.IEEETable, crc32.MakeTable(crc32.Castagnoli)
	const block, blocks = 512, 9
	plain := make([]byte, block*blocks)
	for i := range plain {
		plain[i] = byte(r.Uint32())
	}
	forms := map[string]struct {
		sig  Sig
		data []byte
	}{
		"plain":  {Sig{}, plain},
		"crc32":  {Sig{Table: ieee, Block: block}, protect(ieee, block, plain)},
		"crc32c": {Sig{Table: c, Block: block}, protect(c, block, plain)},
	}
	for inName, in := range forms {
		for outName, out := range forms {
			if inName == "plain" && outName == "plain" {
				continue
			}
			for trial := 0; trial < 20; trial++ {
				src := append([]byte{}, in.data...)
				dst := make([]byte, len(out.data))
				sc, dc := newCursor(split(r, src), 0), newCursor(split(r, dst), 0)
				if m := transform(&dc, &sc, in.sig, out.sig, uint64(len(src))); m != nil {
					t.Fatalf("%s -> %s: mismatch %+v on good data", inName, outName, *m)
				}
				if !bytes.Equal(dst, out.data) {
					t.Fatalf("%s -> %s: output differs from the reference", inName, outName)
				}
				if !in.sig.on() {
					continue
				}
				// One flipped bit in block 4 (its data or its stored CRC).
				at := 4*(block+SigSize) + r.IntN(block+SigSize)
				src[at] ^= 1 << r.IntN(8)
				sc, dc = newCursor(split(r, src), 0), newCursor(split(r, dst), 0)
				m := transform(&dc, &sc, in.sig, out.sig, uint64(len(src)))
				if m == nil || m.Block != 4 {
					t.Fatalf("%s -> %s: flipped byte %d gave mismatch %+v, want block 4", inName, outName, at, m)
				}
				blk := src[4*(block+SigSize):][:block+SigSize]
				if m.Expected != binary.BigEndian.Uint32(blk[block:]) || m.Actual != crc32.Checksum(blk[:block], in.sig.Table) {
					t.Fatalf("%s -> %s: mismatch %+v does not name the stored and computed values", inName, outName, *m)
				}
			}
		}
	}
}

// TestCursorSkip starts a transfer in the middle of split memory.
func TestCursorSkip(t *testing.T) {
	mem := []byte("abcdefghijklmnopqrstuvwxyz")
	pieces := [][]byte{mem[:3], mem[3:4], mem[4:20], mem[20:]}
	for skip := 0; skip <= len(mem); skip++ {
		src := newCursor(pieces, uint64(skip))
		got := make([]byte, len(mem)-skip)
		dst := newCursor([][]byte{got}, 0)
		transform(&dst, &src, Sig{}, Sig{}, uint64(len(got)))
		if string(got) != string(mem[skip:]) {
			t.Fatalf("skip %d: %q", skip, got)
		}
	}
}
