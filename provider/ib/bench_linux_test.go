//go:build cgo && urma_verbs

package ib_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// The benchmarks mirror perftest's ib_write_lat, ib_send_lat and
// ib_write_bw on the guest's rxe0, through the public API, so that
// bench/ib-perftest can run them next to perftest in the same guest:
// two contexts (perftest uses two processes), each busy-polling.

const (
	benchDepth  = 128
	signalEvery = 32 // unsignaled requests between signaled ones
)

// benchSide is one end: a segment whose first half receives and whose
// second half is the send buffer, a JFS and a JFR on one JFC.
type benchSide struct {
	ctx  *urma.Context
	seg  *segment.Segment
	tg   *segment.Target // the other side's segment
	jfc  *jetty.JFC
	jfs  *jetty.JFS
	jfr  *jetty.JFR
	peer *jetty.Remote // the other side's JFR
	crs  []jetty.CR
	wr   []jetty.WR
	rwr  []jetty.RecvWR
	sent int
	size int
}

func newBenchPair(b *testing.B, size int) (*benchSide, *benchSide) {
	env := vm.Require(b)
	dev, err := urma.DeviceByName(env.RXE.Name)
	require.NoError(b, err)
	mk := func() *benchSide {
		s := &benchSide{size: size, crs: make([]jetty.CR, 16), wr: make([]jetty.WR, 1), rwr: make([]jetty.RecvWR, 1)}
		s.ctx, err = urma.Open(dev, 0, nil)
		require.NoError(b, err)
		b.Cleanup(func() { s.ctx.Close() })
		s.seg, err = segment.Alloc(s.ctx, uint64(2*size), segment.Config{Access: segment.Read | segment.Write})
		require.NoError(b, err)
		s.jfc, err = jetty.NewJFC(s.ctx, jetty.JFCConfig{Depth: 4 * benchDepth})
		require.NoError(b, err)
		inline := 0
		if size <= dev.Attr().MaxInline {
			inline = size // perftest inlines what fits
		}
		s.jfs, err = jetty.NewJFS(s.ctx, jetty.JFSConfig{Depth: benchDepth, JFC: s.jfc, MaxInline: inline})
		require.NoError(b, err)
		s.jfr, err = jetty.NewJFR(s.ctx, jetty.JFRConfig{Depth: benchDepth, JFC: s.jfc})
		require.NoError(b, err)
		return s
	}
	x, y := mk(), mk()
	link := func(from, to *benchSide) {
		from.tg, err = segment.Import(context.Background(), from.ctx, to.seg.Descriptor(), 0)
		require.NoError(b, err)
		from.peer, err = jetty.ImportJFR(context.Background(), from.ctx, to.jfr.Descriptor(), 0)
		require.NoError(b, err)
		require.NoError(b, from.jfs.Advise(context.Background(), from.peer))
	}
	link(x, y)
	link(y, x)
	return x, y
}

// postOne posts one request, signaled every signalEvery, and reports
// whether it was signaled.
func (s *benchSide) postOne(b *testing.B, w jetty.WR) bool {
	s.sent++
	signaled := s.sent%signalEvery == 0
	if signaled {
		w.Flags |= jetty.Signaled
	}
	s.wr[0] = w
	if err := s.jfs.Post(s.wr); err != nil {
		b.Fatal(err)
	}
	return signaled
}

// post posts one request and reaps the signaled records so the queue
// never fills.
func (s *benchSide) post(b *testing.B, w jetty.WR) {
	if s.postOne(b, w) {
		s.waitSend(b)
	}
}

// waitSend polls until a send record arrives (receive records are not
// expected here).
func (s *benchSide) waitSend(b *testing.B) {
	for {
		n, err := s.jfc.Poll(s.crs[:1])
		if err != nil || n == 1 && !s.crs[0].OK() {
			b.Fatalf("poll: %v %v", err, s.crs[0])
		}
		if n == 1 {
			return
		}
	}
}

func (s *benchSide) writeWR(flags jetty.Flags) jetty.WR {
	w := jetty.WR{Opcode: urma.OpWrite, Flags: flags, To: s.peer,
		Local: []segment.SGE{s.seg.SGE(uint64(s.size), uint32(s.size))}, Remote: s.tg.SGE(0, uint32(s.size))}
	if s.size <= s.ctx.Device().Attr().MaxInline {
		w.Flags |= jetty.Inline
		w.Inline = s.seg.Bytes()[s.size : 2*s.size]
	}
	return w
}

// mark sets the last byte of the send buffer; wait spins until the last
// byte of the receive half holds v, as perftest's write_lat does.
func (s *benchSide) mark(v byte) { s.seg.Bytes()[2*s.size-1] = v }

func (s *benchSide) wait(v byte) {
	word := (*uint32)(unsafe.Pointer(&s.seg.Bytes()[s.size-4]))
	for i := 0; byte(atomic.LoadUint32(word)>>24) != v; i++ {
		if i%256 == 255 {
			// With GODEBUG=asyncpreemptoff=1 nothing else can stop
			// this loop, and a collection's stop-the-world would wait
			// for it forever.
			runtime.Gosched()
		}
	}
}

var benchSizes = []int{8, 64 << 10}

func sizeName(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkWriteLat is a WRITE ping-pong: each side writes its buffer into
// the other's and spins on the last byte. It reports half the round trip.
func BenchmarkWriteLat(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			x, y := newBenchPair(b, size)
			wx, wy := x.writeWR(0), y.writeWR(0)
			pingPong(b, func(i int) {
				v := byte(i%255 + 1)
				x.mark(v)
				x.post(b, wx)
				x.wait(v)
			}, func(i int) {
				v := byte(i%255 + 1)
				y.wait(v)
				y.mark(v)
				y.post(b, wy)
			})
		})
	}
}

// pingPong runs b.N round trips, mine on this goroutine and peer on
// another, with i counting from 1, and reports half a round trip.
func pingPong(b *testing.B, mine, peer func(i int)) {
	n := b.N
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= n; i++ {
			peer(i)
		}
	}()
	b.ResetTimer()
	start := time.Now()
	for i := 1; i <= n; i++ {
		mine(i)
	}
	el := time.Since(start)
	<-done
	b.ReportMetric(float64(el.Nanoseconds())/float64(n)/2/1000, "us/half-rtt")
}

// BenchmarkSendLat is a SEND ping-pong: each side waits for the receive
// record, posts the receive again and answers.
func BenchmarkSendLat(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			x, y := newBenchPair(b, size)
			for _, s := range []*benchSide{x, y} {
				s.rwr[0] = jetty.RecvWR{Local: []segment.SGE{s.seg.SGE(0, uint32(size))}}
				for i := 0; i < benchDepth; i++ {
					require.NoError(b, s.jfr.PostRecv(s.rwr))
				}
			}
			send := func(s *benchSide) jetty.WR {
				w := jetty.WR{Opcode: urma.OpSend, To: s.peer, Local: []segment.SGE{s.seg.SGE(uint64(size), uint32(size))}}
				if size <= s.ctx.Device().Attr().MaxInline {
					w.Flags |= jetty.Inline
					w.Inline = s.seg.Bytes()[size : 2*size]
				}
				return w
			}
			sx, sy := send(x), send(y)
			// recv spins until a receive record arrives, reposting it;
			// send records met on the way are only reaped.
			recv := func(s *benchSide) {
				for {
					k, err := s.jfc.Poll(s.crs[:1])
					if err != nil || k == 1 && !s.crs[0].OK() {
						b.Fatalf("poll: %v %v", err, s.crs[0])
					}
					if k == 1 && s.crs[0].Flags&jetty.CRRecv != 0 {
						if err := s.jfr.PostRecv(s.rwr); err != nil {
							b.Fatal(err)
						}
						return
					}
				}
			}
			// Signaled sends are reaped by recv, not waited for.
			pingPong(b, func(int) {
				x.postOne(b, sx)
				recv(x)
			}, func(int) {
				recv(y)
				y.postOne(b, sy)
			})
		})
	}
}

// BenchmarkWriteBW streams WRITEs with up to benchDepth in flight, as
// ib_write_bw does; go test reports MB/s.
func BenchmarkWriteBW(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			x, _ := newBenchPair(b, size)
			w := x.writeWR(0)
			b.SetBytes(int64(size))
			b.ResetTimer()
			inFlight := 0
			for i := 0; i < b.N; i++ {
				x.sent++
				ww := w
				if x.sent%signalEvery == 0 || i == b.N-1 {
					ww.Flags |= jetty.Signaled
				}
				x.wr[0] = ww
				if err := x.jfs.Post(x.wr); err != nil {
					b.Fatal(err)
				}
				inFlight++
				// Reap once a signal's worth of requests is beyond the
				// depth budget.
				for inFlight > benchDepth-signalEvery {
					x.waitSend(b)
					inFlight -= signalEvery
				}
			}
			for inFlight > 0 { // the last request is signaled: drain to it
				x.waitSend(b)
				inFlight -= min(inFlight, signalEvery)
			}
		})
	}
}
