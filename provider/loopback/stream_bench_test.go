package loopback_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// BenchmarkSendStream8 runs urmactl perf's send_bw loop in one process and
// on one core: a batch of receives posted with one call, as many 8-byte
// prepared SENDs (one signaled in 64), and a poll of the receives' JFC.
// ns/op is the software cost of one message, sender and receiver together,
// with no cache line crossing cores.
func BenchmarkSendStream8(b *testing.B) { benchSendStream8(b, false) }

// BenchmarkSendStream8PreparedRecv is BenchmarkSendStream8 with its
// receives posted as a prepared list (JFR.PrepareRecv), as urmactl perf's
// send_bw server posts them.
func BenchmarkSendStream8PreparedRecv(b *testing.B) { benchSendStream8(b, true) }

// BenchmarkSendStream8LockFree is BenchmarkSendStream8PreparedRecv with
// lock-free queues and JFCs, as urmactl perf makes them (lockFreePair).
func BenchmarkSendStream8LockFree(b *testing.B) {
	benchSendStream8On(b, lockFreePair(b), true)
}

// BenchmarkSendStream8Post is BenchmarkSendStream8 as a user writes it
// from the API alone, as urmactl perf's default send_bw loop runs: each
// SEND through JFS.Post of a list of one (one signaled in 64), receives
// through JFR.PostRecv, on default queues.
func BenchmarkSendStream8Post(b *testing.B) {
	const batch = 16
	p := newPair(b)
	wrs := []jetty.WR{{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(0, 8)}, To: p.remote}}
	recvs := make([]jetty.RecvWR, batch)
	for i := range recvs {
		recvs[i] = jetty.RecvWR{Local: []segment.SGE{p.dst.SGE(0, 8)}, UserCtx: uint64(i)}
	}
	crs := make([]jetty.CR, batch)
	b.ReportAllocs()
	sent := 0
	for b.Loop() {
		if sent%batch == 0 {
			must(b, p.jfr.PostRecv(recvs))
		}
		sent++
		wrs[0].Flags = 0
		if sent%64 == 0 {
			wrs[0].Flags = jetty.Signaled
		}
		must(b, p.jfs.Post(wrs))
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

func benchSendStream8(b *testing.B, prepared bool) { benchSendStream8On(b, newPair(b), prepared) }

func benchSendStream8On(b *testing.B, p *pair, prepared bool) {
	const batch = 16
	w := jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(0, 8)}, To: p.remote}
	quiet, loud := prepareQuietLoud(b, p.jfs, w)
	recvs := make([]jetty.RecvWR, batch)
	for i := range recvs {
		recvs[i] = jetty.RecvWR{Local: []segment.SGE{p.dst.SGE(0, 8)}, UserCtx: uint64(i)}
	}
	post := func() error { return p.jfr.PostRecv(recvs) }
	if prepared {
		pr, err := p.jfr.PrepareRecv(recvs)
		must(b, err)
		post = pr.Post
	}
	crs := make([]jetty.CR, batch)
	b.ReportAllocs()
	sent := 0
	for b.Loop() {
		if sent%batch == 0 {
			must(b, post())
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

// BenchmarkSendStream8Cores is BenchmarkSendStream8 with the receiver on
// its own goroutine, so on the other core: it keeps the JFR full and polls
// the receives' records as urmactl perf's send_bw server does, while this
// goroutine posts 8-byte prepared SENDs (one signaled in 64). ns/op is the
// cost of one message across cores, the figure BenchmarkInboxStream8
// (package-internal) compares with.
func BenchmarkSendStream8Cores(b *testing.B) {
	const batch = 16
	p := newPair(b)
	w := jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(0, 8)}, To: p.remote}
	quiet, loud := prepareQuietLoud(b, p.jfs, w)
	recvs := make([]jetty.RecvWR, jetty.DefaultDepth)
	for i := range recvs {
		recvs[i] = jetty.RecvWR{Local: []segment.SGE{p.dst.SGE(0, 8)}, UserCtx: uint64(i)}
	}
	must(b, p.jfr.PostRecv(recvs))
	var stop atomic.Bool
	var got atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		crs := make([]jetty.CR, batch)
		for !stop.Load() {
			n, err := p.jfcB.Poll(crs)
			if err != nil || n == 0 {
				continue
			}
			if err := p.jfr.PostRecv(recvs[:n]); err != nil {
				panic(err)
			}
			got.Add(int64(n))
		}
	})
	b.ReportAllocs()
	sent := int64(0)
	for b.Loop() {
		sent++
		pr := quiet
		if sent%64 == 0 {
			pr = loud
		}
		must(b, pr.Post())
		if sent%64 == 0 && sent > 64 {
			p.pollOne(b, p.jfcA)
		}
	}
	for got.Load() < sent {
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmsg/s")
}

// BenchmarkFAddPoll8 is urmactl perf's atomic_lat iteration in one
// process: a prepared, signaled FADD and a poll for its record.
func BenchmarkFAddPoll8(b *testing.B) {
	p := newPair(b)
	pr, err := p.jfs.Prepare(jetty.WR{Opcode: urma.OpFAdd, Flags: jetty.Signaled, Operand: 1,
		Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8), To: p.remote})
	must(b, err)
	b.ReportAllocs()
	for b.Loop() {
		must(b, pr.Post())
		p.pollOne(b, p.jfcA)
	}
}

// prepareQuietLoud prepares w on jfs twice, unsignaled and signaled, as
// urmactl perf's bandwidth loops signal one request in many.
func prepareQuietLoud(tb testing.TB, jfs *jetty.JFS, w jetty.WR) (quiet, loud *jetty.Prepared) {
	quiet, err := jfs.Prepare(w)
	must(tb, err)
	w.Flags |= jetty.Signaled
	loud, err = jfs.Prepare(w)
	must(tb, err)
	return quiet, loud
}
