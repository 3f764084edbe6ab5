package loopback_test

import (
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// BenchmarkSendStream8 runs urmactl perf's send_bw loop in one process and
// on one core: a batch of receives posted with one call, as many 8-byte
// prepared SENDs (one signaled in 64), and a poll of the receives' JFC.
// ns/op is the software cost of one message, sender and receiver together,
// with no cache line crossing cores.
func BenchmarkSendStream8(b *testing.B) {
	const batch = 16
	p := newPair(b)
	w := jetty.WR{Opcode: urma.OpSend, Local: []jetty.SGE{p.src.SGE(0, 8)}, Target: p.remote}
	quiet, err := p.jfs.Prepare(w)
	must(b, err)
	w.Flags |= jetty.Signaled
	loud, err := p.jfs.Prepare(w)
	must(b, err)
	recvs := make([]jetty.RecvWR, batch)
	for i := range recvs {
		recvs[i] = jetty.RecvWR{Local: []jetty.SGE{p.dst.SGE(0, 8)}, UserCtx: uint64(i)}
	}
	crs := make([]jetty.CR, batch)
	b.ReportAllocs()
	sent := 0
	for b.Loop() {
		if sent%batch == 0 {
			_, err := p.jfr.Raw().PostRecv(recvs)
			must(b, err)
		}
		sent++
		pr := quiet
		if sent%64 == 0 {
			pr = loud
		}
		must(b, pr.Post())
		if sent%64 == 0 {
			p.pollOne(b, p.jfcA)
		}
		if sent%batch == 0 {
			for got := 0; got < batch; {
				n, err := p.jfcB.Poll(crs[:batch-got])
				must(b, err)
				got += n
			}
		}
	}
}

// BenchmarkFAddPoll8 is urmactl perf's atomic_lat iteration in one
// process: a prepared, signaled FADD and a poll for its record.
func BenchmarkFAddPoll8(b *testing.B) {
	p := newPair(b)
	pr, err := p.jfs.Prepare(jetty.WR{Opcode: urma.OpFAdd, Flags: jetty.Signaled, Operand: 1,
		Local: []jetty.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8), Target: p.remote})
	must(b, err)
	b.ReportAllocs()
	for b.Loop() {
		must(b, pr.Post())
		p.pollOne(b, p.jfcA)
	}
}
