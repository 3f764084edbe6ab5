package loopback_test

import (
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
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
			p.pollOne(b, p.jfcA)
		}
	}
}

// benchPrepared is benchPost with the request prepared twice, unsignaled
// and signaled.
func benchPrepared(b *testing.B, p *pair, w jetty.WR) {
	quiet, err := p.jfs.Prepare(w)
	must(b, err)
	w.Flags |= jetty.Signaled
	loud, err := p.jfs.Prepare(w)
	must(b, err)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		pr := quiet
		if i%64 == 0 {
			pr = loud
		}
		if err := pr.Post(); err != nil {
			b.Fatal(err)
		}
		if i%64 == 0 {
			p.pollOne(b, p.jfcA)
		}
	}
}

// BenchmarkPost measures a post of each kind of small request, through
// Post and prepared (JFS.Prepare).
func BenchmarkPost(b *testing.B) {
	for _, c := range []struct {
		name string
		wr   func(p *pair) jetty.WR
	}{
		{"Write8", func(p *pair) jetty.WR {
			return jetty.WR{Opcode: urma.OpWrite, Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)}
		}},
		{"WriteInline8", func(p *pair) jetty.WR {
			return jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Inline, Inline: make([]byte, 8), Remote: p.tgt.SGE(0, 8)}
		}},
		{"Read8", func(p *pair) jetty.WR {
			return jetty.WR{Opcode: urma.OpRead, Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)}
		}},
		{"FAdd", func(p *pair) jetty.WR {
			return jetty.WR{Opcode: urma.OpFAdd, Operand: 1, Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := newPair(b)
			w := c.wr(p)
			w.To = p.remote
			benchPost(b, p, w)
		})
		b.Run(c.name+"Prepared", func(b *testing.B) {
			p := newPair(b)
			w := c.wr(p)
			w.To = p.remote
			benchPrepared(b, p, w)
		})
	}
}

// BenchmarkPostAndPoll measures the loop a user writes from the API
// alone: one signaled request, then a poll for its record, on default
// (locked) queues; through Post, through the helper of its opcode, and
// prepared, for comparison.
func BenchmarkPostAndPoll(b *testing.B) {
	b.Run("Write8Post", func(b *testing.B) {
		p := newPair(b)
		wrs := []jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: p.remote,
			Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)}}
		b.ReportAllocs()
		for b.Loop() {
			must(b, p.jfs.Post(wrs))
			p.pollOne(b, p.jfcA)
		}
	})
	b.Run("Write8Helper", func(b *testing.B) {
		p := newPair(b)
		local, remote := p.src.SGE(0, 8), p.tgt.SGE(0, 8)
		b.ReportAllocs()
		for b.Loop() {
			must(b, p.jfs.Write(p.remote, remote, local, 0, 0))
			p.pollOne(b, p.jfcA)
		}
	})
	b.Run("Write8Prepared", func(b *testing.B) {
		p := newPair(b)
		pr, err := p.jfs.Prepare(jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: p.remote,
			Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)})
		must(b, err)
		b.ReportAllocs()
		for b.Loop() {
			must(b, pr.Post())
			p.pollOne(b, p.jfcA)
		}
	})
}
