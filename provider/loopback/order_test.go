package loopback_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A WRITE's last byte lands last: a target that polls the last byte of a
// request (HERD) and sees it set finds every byte before it written too.
// The target's memory is mapped shared memory in this process (Alloc), and
// caller memory of another process that only process_vm_writev reaches.
// The source is three SGEs so that the split falls inside any of them.
func TestWriteLastByteLandsLast(t *testing.T) {
	sizes := []int{9, 12, 16, 17, 31, 64, 100, 255, 256, 257, 1000, 2048, 4099, 65536, 1<<20 + 5}
	t.Run("mapped", func(t *testing.T) {
		p := newPair(t)
		dst, err := segment.Alloc(p.b, 2<<20, segment.Config{Access: segment.Read | segment.Write})
		require.NoError(t, err)
		tgt, err := segment.Import(t.Context(), p.a, dst.Descriptor(), 0)
		require.NoError(t, err)
		src, err := segment.Alloc(p.a, 2<<20, segment.Config{Access: segment.LocalOnly})
		require.NoError(t, err)
		for _, n := range sizes {
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				lastByteLast(t, p.jfs, p.jfcA, p.remote, src, tgt, dst.Bytes(), n)
			})
		}
	})
	t.Run("xproc", func(t *testing.T) {
		x := newXProc(t)
		buf, err := x.peer.CallerMemory(1 << 17)
		require.NoError(t, err)
		seg, err := segment.Register(x.b, buf, segment.Config{Access: segment.Read | segment.Write})
		require.NoError(t, err)
		tgt, err := segment.Import(t.Context(), x.a, seg.Descriptor(), 0)
		require.NoError(t, err)
		_, _, rem := x.peerJFR(t, 4)
		src, err := segment.Alloc(x.a, 1<<17, segment.Config{Access: segment.LocalOnly})
		require.NoError(t, err)
		jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
		for _, n := range sizes {
			if n > 1<<16 {
				continue
			}
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				lastByteLast(t, jfs, jfc, rem, src, tgt, buf, n)
			})
		}
	})
}

// lastByteLast WRITEs n bytes of value v into mem (seen through tgt) again
// and again, while a poller waits for the last byte to become v, checks
// the bytes before it and clears the last word to ask for the next round.
func lastByteLast(t *testing.T, jfs *jetty.JFS, jfc *jetty.JFC, rem *jetty.Remote, src *segment.Segment, tgt *segment.Target, mem []byte, n int) {
	rounds := 300
	if n > 1<<16 {
		rounds = 20
	}
	// The request ends on a 4-byte boundary, so that its last word can
	// be read and cleared atomically.
	off := (4 - n%4) % 4
	word := (*uint32)(unsafe.Pointer(&mem[off+n-4]))
	last := func() byte { w := atomic.LoadUint32(word); return (*[4]byte)(unsafe.Pointer(&w))[3] }
	atomic.StoreUint32(word, 0)

	bad := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := range rounds {
			v := byte(r%255 + 1)
			deadline := time.Now().Add(10 * time.Second)
			for spins := 0; last() != v; spins++ {
				if spins%256 == 255 {
					if time.Now().After(deadline) {
						bad <- fmt.Sprintf("round %d: last byte never became %d", r, v)
						return
					}
					runtime.Gosched()
				}
			}
			for i, b := range mem[off : off+n-1] {
				if b != v {
					bad <- fmt.Sprintf("round %d: last byte is %d but byte %d of %d is %d", r, v, i, n, b)
					return
				}
			}
			atomic.StoreUint32(word, 0)
		}
	}()

	a, b := n/3, n/3+n/5
	sges := []segment.SGE{src.SGE(0, uint32(a)), src.SGE(uint64(a), uint32(b-a)), src.SGE(uint64(b), uint32(n-b))}
	crs := make([]jetty.CR, 1)
	for r := range rounds {
		for last() != 0 {
			select {
			case msg := <-bad:
				t.Fatal(msg)
			default:
				runtime.Gosched()
			}
		}
		v := byte(r%255 + 1)
		s := src.Bytes()[:n]
		for i := range s {
			s[i] = v
		}
		require.NoError(t, jfs.Post([]jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: rem,
			Local: sges, Remote: tgt.SGE(uint64(off), uint32(n))}}))
		for k := 0; k == 0; {
			var err error
			k, err = jfc.Poll(crs)
			require.NoError(t, err)
		}
		require.NoError(t, crs[0].Err())
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the poller did not finish")
	}
	select {
	case msg := <-bad:
		t.Fatal(msg)
	default:
	}
}
