package loopback_test

import (
	"testing"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// pair is an initiator and a target context with the objects the data-path
// benchmarks need.
type pair struct {
	a, b       *urma.Context
	src, dst   *segment.Segment
	tgt        *segment.Target
	jfcA, jfcB *jetty.JFC
	jfs        *jetty.JFS
	jfr        *jetty.JFR
	remote     *jetty.Remote
	crs        []jetty.CR
}

func newPair(tb testing.TB) *pair { return newPairOf(tb, false) }

// lockFreePair is newPair with lock-free queues and JFCs
// (JFSConfig.LockFree, JFCConfig.LockFree), as urmactl perf makes them.
func lockFreePair(tb testing.TB) *pair { return newPairOf(tb, true) }

func newPairOf(tb testing.TB, lockFree bool) *pair {
	tb.Helper()
	dev, err := urma.DeviceByName("loopback0")
	must(tb, err)
	p := &pair{crs: make([]jetty.CR, 16)}
	p.a, err = urma.Open(dev, 0, nil)
	must(tb, err)
	p.b, err = urma.Open(dev, 1, nil)
	must(tb, err)
	tb.Cleanup(func() { p.a.Close(); p.b.Close() })
	p.src, err = segment.Alloc(p.a, 1<<16, segment.Config{Access: segment.LocalOnly})
	must(tb, err)
	p.dst, err = segment.Alloc(p.b, 1<<16, segment.Config{Access: segment.Read | segment.Write | segment.Atomic})
	must(tb, err)
	p.tgt, err = segment.Import(tb.Context(), p.a, p.dst.Descriptor(), 0)
	must(tb, err)
	p.jfcA, err = jetty.NewJFC(p.a, jetty.JFCConfig{LockFree: lockFree})
	must(tb, err)
	p.jfcB, err = jetty.NewJFC(p.b, jetty.JFCConfig{LockFree: lockFree})
	must(tb, err)
	p.jfs, err = jetty.NewJFS(p.a, jetty.JFSConfig{JFC: p.jfcA, LockFree: lockFree})
	must(tb, err)
	p.jfr, err = jetty.NewJFR(p.b, jetty.JFRConfig{JFC: p.jfcB})
	must(tb, err)
	p.remote, err = jetty.ImportJFR(tb.Context(), p.a, p.jfr.Descriptor(), 0)
	must(tb, err)
	return p
}

// must fails tb on err. Helper is called only on failure: it walks the
// stack, which costs more than the operations the benchmarks measure.
func must(tb testing.TB, err error) {
	if err != nil {
		tb.Helper()
		tb.Fatal(err)
	}
}

// pollOne polls jfc until one record arrives and fails on an error status.
func (p *pair) pollOne(tb testing.TB, jfc *jetty.JFC) {
	for {
		n, err := jfc.Poll(p.crs[:1])
		if err != nil {
			tb.Fatal(err)
		}
		if n == 1 {
			if !p.crs[0].OK() {
				tb.Fatal(p.crs[0])
			}
			return
		}
	}
}

func (p *pair) writePoll(tb testing.TB, size uint32) {
	must(tb, p.jfs.Write(p.remote, p.tgt.SGE(0, size), p.src.SGE(0, size), 0, 1))
	p.pollOne(tb, p.jfcA)
}

func (p *pair) sendRecvPoll(tb testing.TB, size uint32) {
	must(tb, p.jfr.Recv(p.dst.SGE(0, size), 2))
	must(tb, p.jfs.Send(p.remote, p.src.SGE(0, size), 0, 3))
	p.pollOne(tb, p.jfcB)
	p.pollOne(tb, p.jfcA)
}

func (p *pair) casPoll(tb testing.TB, i uint64) {
	must(tb, p.jfs.CompareSwap(p.remote, p.tgt.SGE(0, 8), p.src.SGE(0, 8), i, i+1, 0, 4))
	p.pollOne(tb, p.jfcA)
}

func BenchmarkWritePoll8(b *testing.B)    { benchWrite(b, 8) }
func BenchmarkWritePoll4096(b *testing.B) { benchWrite(b, 4096) }

func benchWrite(b *testing.B, size uint32) {
	p := newPair(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		p.writePoll(b, size)
	}
}

func BenchmarkSendRecvPoll8(b *testing.B) {
	p := newPair(b)
	b.ReportAllocs()
	for b.Loop() {
		p.sendRecvPoll(b, 8)
	}
}

func BenchmarkCASPoll(b *testing.B) {
	p := newPair(b)
	b.ReportAllocs()
	var i uint64
	for b.Loop() {
		p.casPoll(b, i)
		i++
	}
}
