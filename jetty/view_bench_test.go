package jetty_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

// BenchmarkView compares, on loopback, a plain WRITE and READ of 64
// storage chunks (256 KiB) with the same requests through views: an
// interleaved layout without signatures (gather or scatter only), and the
// storage layout whose memory holds a CRC32 per 4092-byte chunk (WRITE:
// gather, check and strip, the peer receives 64 x 4092 bytes; READ: 64 x
// 4092 bytes arrive and are scattered with their CRCs inserted). SetBytes
// counts the memory side, so the GB/s compare directly.
func BenchmarkView(b *testing.B) {
	const chunks = 64
	a, peer := loopbackPair(b)
	f := newViewFix(b, a, peer)
	m := f.seg(a, chunks*4096, segment.LocalOnly)
	copy(m.Bytes(), chunks4096(m.Bytes()))
	dst := f.seg(peer, chunks*4096, segment.Read|segment.Write)
	rt, err := segment.Import(b.Context(), a, dst.Descriptor(), 0)
	require.NoError(b, err)
	defer rt.Close()
	layout := view.Layout{Repeat: chunks, Entries: []view.LayoutEntry{
		{Mem: m, Off: 0, Bytes: 4048, Skip: 48}, {Mem: m, Off: 4048, Bytes: 48, Skip: 4048}}}
	plainView := f.view(view.Config{Layout: layout})
	sigView := f.view(view.Config{Layout: layout,
		Memory: &view.Signature{Kind: view.SigCRC32, BlockSize: view.BlockChunk}})
	for _, c := range []struct {
		name  string
		local segment.SGE
		wire  uint32
	}{
		{"plain", m.SGE(0, chunks*4096), chunks * 4096},
		{"view", plainView.SGE(0, chunks*4096), chunks * 4096},
		{"view+crc32", sigView.SGE(0, chunks*4096), chunks * 4092},
	} {
		for _, op := range []urma.Opcode{urma.OpWrite, urma.OpRead} {
			b.Run(op.String()+"/"+c.name, func(b *testing.B) {
				b.SetBytes(chunks * 4096)
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if op == urma.OpWrite {
						err = f.ajfs.Write(f.atob, rt.SGE(0, c.wire), c.local, 0, 1)
					} else {
						err = f.ajfs.Read(f.atob, rt.SGE(0, c.wire), c.local, 0, 1)
					}
					if err != nil {
						b.Fatal(err)
					}
					if cr := f.poll(f.ajfc); !cr.OK() {
						b.Fatal(cr)
					}
				}
			})
		}
	}
}

// chunks4096 returns the protected form of the plain data in b's first
// 4092-byte parts: what a clean storage segment holds.
func chunks4096(b []byte) []byte {
	n := len(b) / 4096
	return chunks(view.SigCRC32, view.BlockChunk, b[:n*4092])
}
