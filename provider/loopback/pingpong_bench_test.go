package loopback_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// pingSide is one side of a WRITE ping-pong: a prepared, signaled 8-byte
// WRITE into the other side's segment, the word of its own segment the
// other side writes, and the source word of its WRITE.
type pingSide struct {
	pr   *jetty.Prepared
	jfc  *jetty.JFC
	word *uint64
	out  *uint64
	crs  []jetty.CR
}

// newPingSides builds both sides of urmactl perf's write_lat in one
// process: each writes the other's segment through its own pair.
func newPingSides(b *testing.B) (a, z *pingSide) {
	there, back := newPair(b), newPair(b)
	side := func(p, other *pair) *pingSide {
		pr, err := p.jfs.Prepare(jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled,
			Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8), To: p.remote})
		must(b, err)
		return &pingSide{pr: pr, jfc: p.jfcA, crs: make([]jetty.CR, 4),
			word: (*uint64)(unsafe.Pointer(&other.dst.Bytes()[0])),
			out:  (*uint64)(unsafe.Pointer(&p.src.Bytes()[0]))}
	}
	return side(there, back), side(back, there)
}

// answer writes v to the other side, then retires the WRITE's record as
// perf does: after the post, while the other side works.
func (s *pingSide) answer(v uint64) error {
	*s.out = v
	if err := s.pr.Post(); err != nil {
		return err
	}
	for {
		n, err := s.jfc.Poll(s.crs)
		if err != nil {
			return err
		}
		if n > 0 {
			if !s.crs[0].OK() {
				return errors.New(s.crs[0].String())
			}
			return nil
		}
	}
}

// BenchmarkWritePingPong8 is urmactl perf's write_lat between two
// goroutines, so on two cores: its ns/half-rtt less BenchmarkRawPingPong8's
// is what the data path adds to a cache line's trip between cores.
func BenchmarkWritePingPong8(b *testing.B) {
	a, z := newPingSides(b)
	var stop atomic.Bool
	var failed error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stop.Store(true)
		for v := uint64(1); ; v++ {
			for atomic.LoadUint64(z.word) != v {
				if stop.Load() {
					return
				}
			}
			if failed = z.answer(v); failed != nil {
				return
			}
		}
	}()
	v := uint64(0)
	for b.Loop() {
		v++
		must(b, a.answer(v))
		for atomic.LoadUint64(a.word) != v && !stop.Load() {
		}
		if stop.Load() {
			break
		}
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	must(b, failed)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/half-rtt")
}

// BenchmarkRawPingPong8 is the floor BenchmarkWritePingPong8 compares
// with: two goroutines storing to each other's word.
func BenchmarkRawPingPong8(b *testing.B) {
	var words [2][8]uint64 // a line each
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for v := uint64(1); ; v++ {
			for atomic.LoadUint64(&words[0][0]) != v {
				if stop.Load() {
					return
				}
			}
			atomic.StoreUint64(&words[1][0], v)
		}
	}()
	v := uint64(0)
	for b.Loop() {
		v++
		atomic.StoreUint64(&words[0][0], v)
		for atomic.LoadUint64(&words[1][0]) != v {
		}
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/half-rtt")
}
