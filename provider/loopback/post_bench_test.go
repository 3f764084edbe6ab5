package loopback_test

import (
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// benchPost posts w over and over, signaling one request in 64 and polling
// that one, so that ns/op is the cost of a post with little of the poll.
func benchPost(b *testing.B, p *pair, w jetty.WR) {
	wrs := []jetty.WR{w}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		wrs[0].Flags = w.Flags
		if i%64 == 0 {
			wrs[0].Flags |= jetty.Signaled
		}
		if err := p.jfs.Post(wrs); err != nil {
			b.Fatal(err)
		}
		if i%64 == 0 {
			for n := 0; n == 0; {
				var err error
				if n, err = p.jfcA.Poll(p.crs[:1]); err != nil || (n == 1 && !p.crs[0].OK()) {
					b.Fatal(err, p.crs[0])
				}
			}
		}
	}
}

func BenchmarkPostWrite8(b *testing.B) {
	p := newPair(b)
	benchPost(b, p, jetty.WR{Opcode: urma.OpWrite, Target: p.remote,
		Local: []jetty.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)})
}

func BenchmarkPostWriteInline8(b *testing.B) {
	p := newPair(b)
	benchPost(b, p, jetty.WR{Opcode: urma.OpWrite, Target: p.remote, Flags: jetty.Inline,
		Inline: make([]byte, 8), Remote: p.tgt.SGE(0, 8)})
}

func BenchmarkPostRead8(b *testing.B) {
	p := newPair(b)
	benchPost(b, p, jetty.WR{Opcode: urma.OpRead, Target: p.remote,
		Local: []jetty.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)})
}

func BenchmarkPostFAdd(b *testing.B) {
	p := newPair(b)
	benchPost(b, p, jetty.WR{Opcode: urma.OpFAdd, Target: p.remote, Operand: 1,
		Local: []jetty.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)})
}
