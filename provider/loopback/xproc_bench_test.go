package loopback_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// The cross-process benchmarks run their peer as a second copy of the test
// binary with benchPeerEnv naming its role. The two sides exchange
// descriptors as hex lines over the peer's stdin and stdout, and the peer
// exits when its stdin closes.
const benchPeerEnv = "URMA_LOOPBACK_BENCH_PEER"

// maybeBenchPeer plays the benchmark peer if this process was started as
// one, and then exits; TestMain calls it first.
func maybeBenchPeer() {
	role := os.Getenv(benchPeerEnv)
	if role == "" {
		return
	}
	if err := benchPeer(role, bufio.NewReader(os.Stdin), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench peer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func benchPeer(role string, in *bufio.Reader, out io.Writer) error {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		return err
	}
	ctx, err := urma.Open(dev, 1, nil)
	if err != nil {
		return err
	}
	defer ctx.Close()
	seg, err := segment.Alloc(ctx, 1<<20, segment.Config{Access: segment.Read | segment.Write})
	if err != nil {
		return err
	}
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 4096})
	if err != nil {
		return err
	}
	jfr, err := jetty.NewJFR(ctx, jetty.JFRConfig{Depth: 2048, JFC: jfc})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, hexOf(seg.Descriptor()), hexOf(jfr.Descriptor()))
	stop := make(chan struct{})
	switch role {
	case "idle":
		io.Copy(io.Discard, in)
		return nil
	case "recv":
		go func() { io.Copy(io.Discard, in); close(stop) }()
		return recvLoop(jfr, jfc, seg, stop)
	case "inbox":
		own, cells, err := openParentInbox(in)
		if err != nil {
			return err
		}
		go func() { io.Copy(io.Discard, in); close(stop) }()
		return loopback.DrainInbox(own, cells, stop)
	case "inbox-check":
		own, cells, err := openParentInbox(in)
		if err != nil {
			return err
		}
		var n uint64
		if _, err := fmt.Fscan(in, &n); err != nil {
			return err
		}
		if err := loopback.CheckInbox(own, cells, n); err != nil {
			fmt.Fprintln(out, "fail:", err)
		} else {
			fmt.Fprintln(out, "ok")
		}
		io.Copy(io.Discard, in)
		return nil
	case "pong":
		var sd, jd string
		if _, err := fmt.Fscan(in, &sd, &jd); err != nil {
			return err
		}
		var pd segment.Descriptor
		var pj jetty.Descriptor
		if err := unhex(sd, &pd); err != nil {
			return err
		}
		if err := unhex(jd, &pj); err != nil {
			return err
		}
		go func() { io.Copy(io.Discard, in); close(stop) }()
		return pongLoop(ctx, seg, jfc, pd, pj, stop)
	}
	return fmt.Errorf("unknown role %q", role)
}

// openParentInbox reads the parent's pid, its inbox's memfd and the cell
// count from in, and opens that memfd through /proc for this process.
func openParentInbox(in io.Reader) (fd, cells int, err error) {
	var pid, parentFD int
	if _, err := fmt.Fscan(in, &pid, &parentFD, &cells); err != nil {
		return -1, 0, err
	}
	fd, err = unix.Open(fmt.Sprintf("/proc/%d/fd/%d", pid, parentFD), unix.O_RDWR|unix.O_CLOEXEC, 0)
	return fd, cells, err
}

// recvLoop keeps the JFR stocked with 8-byte receives and counts nothing:
// the sender measures.
func recvLoop(jfr *jetty.JFR, jfc *jetty.JFC, seg *segment.Segment, stop chan struct{}) error {
	const n = 2048
	wrs := make([]jetty.RecvWR, n)
	sges := make([]segment.SGE, n)
	for i := range wrs {
		sges[i] = seg.SGE(uint64(i)*8, 8)
		wrs[i] = jetty.RecvWR{UserCtx: uint64(i), Local: sges[i : i+1]}
	}
	if err := jfr.PostRecv(wrs); err != nil {
		return err
	}
	crs := make([]jetty.CR, 64)
	again := make([]jetty.RecvWR, 0, 64)
	for {
		k, err := jfc.Poll(crs)
		if err != nil {
			return err
		}
		if k == 0 {
			select {
			case <-stop:
				return nil
			default:
			}
			runtime.Gosched()
			continue
		}
		again = again[:0]
		for _, cr := range crs[:k] {
			again = append(again, wrs[cr.UserCtx])
		}
		if err := jfr.PostRecv(again); err != nil {
			return err
		}
	}
}

// pongLoop answers every value the peer writes into word 0 of seg by
// writing it into word 0 of the peer's segment.
func pongLoop(ctx *urma.Context, seg *segment.Segment, jfc *jetty.JFC, pd segment.Descriptor, pj jetty.Descriptor, stop chan struct{}) error {
	tgt, err := segment.Import(context.Background(), ctx, pd, 0)
	if err != nil {
		return err
	}
	jfs, err := jetty.NewJFS(ctx, jetty.JFSConfig{JFC: jfc})
	if err != nil {
		return err
	}
	rem, err := jetty.ImportJFR(context.Background(), ctx, pj, 0)
	if err != nil {
		return err
	}
	word := (*uint64)(unsafe.Pointer(&seg.Bytes()[0]))
	src := seg.SGE(8, 8)
	crs := make([]jetty.CR, 1)
	var last uint64
	for {
		v := spinUntilChange(word, last, stop)
		if v == 0 {
			return nil
		}
		last = v
		binary.NativeEndian.PutUint64(seg.Bytes()[8:], v)
		if err := jfs.Write(rem, tgt.SGE(0, 8), src, 0, v); err != nil {
			return err
		}
		for {
			k, err := jfc.Poll(crs)
			if err != nil {
				return err
			}
			if k == 1 {
				break
			}
		}
	}
}

// spinUntilChange waits for *p to differ from old, spinning briefly and then
// yielding, since both processes share two cores; it returns 0 on stop.
func spinUntilChange(p *uint64, old uint64, stop chan struct{}) uint64 {
	for i := 0; ; i++ {
		if v := atomic.LoadUint64(p); v != old {
			return v
		}
		if i%64 == 63 {
			select {
			case <-stop:
				return 0
			default:
			}
			runtime.Gosched()
		}
	}
}

type binaryMarshaler interface{ MarshalBinary() ([]byte, error) }

func hexOf(m binaryMarshaler) string {
	b, err := m.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func unhex(s string, v interface{ UnmarshalBinary([]byte) error }) error {
	b, err := hex.DecodeString(s)
	if err != nil {
		return err
	}
	return v.UnmarshalBinary(b)
}

// benchPeerProc is the parent's handle on a benchmark peer.
type benchPeerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader // the peer's stdout, past the descriptors
	seg   segment.Descriptor
	jfr   jetty.Descriptor
}

func startBenchPeer(tb testing.TB, role string) *benchPeerProc {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchPeerEnv+"="+role)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	must(tb, err)
	stdout, err := cmd.StdoutPipe()
	must(tb, err)
	must(tb, cmd.Start())
	p := &benchPeerProc{cmd: cmd, stdin: stdin}
	tb.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("bench peer: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			tb.Errorf("bench peer did not exit")
		}
	})
	var sd, jd string
	p.out = bufio.NewReader(stdout)
	if _, err := fmt.Fscan(p.out, &sd, &jd); err != nil {
		tb.Fatalf("bench peer: %v", err)
	}
	must(tb, unhex(sd, &p.seg))
	must(tb, unhex(jd, &p.jfr))
	return p
}

// initiator is the parent's side of a cross-process benchmark.
type initiator struct {
	ctx    *urma.Context
	local  *segment.Segment
	tgt    *segment.Target
	jfc    *jetty.JFC
	jfs    *jetty.JFS
	remote *jetty.Remote
	crs    []jetty.CR
}

func newInitiator(tb testing.TB, p *benchPeerProc, rnr time.Duration) *initiator {
	tb.Helper()
	dev, err := urma.DeviceByName("loopback0")
	must(tb, err)
	in := &initiator{crs: make([]jetty.CR, 64)}
	in.ctx, err = urma.Open(dev, 0, nil)
	must(tb, err)
	tb.Cleanup(func() { in.ctx.Close() })
	in.local, err = segment.Alloc(in.ctx, 1<<20, segment.Config{Access: segment.Read | segment.Write})
	must(tb, err)
	in.tgt, err = segment.Import(context.Background(), in.ctx, p.seg, 0)
	must(tb, err)
	in.jfc, err = jetty.NewJFC(in.ctx, jetty.JFCConfig{Depth: 1024})
	must(tb, err)
	in.jfs, err = jetty.NewJFS(in.ctx, jetty.JFSConfig{JFC: in.jfc, Depth: 512, RNRRetry: 7, RNRTimeout: rnr})
	must(tb, err)
	in.remote, err = jetty.ImportJFR(context.Background(), in.ctx, p.jfr, 0)
	must(tb, err)
	return in
}

// reap polls completions until at most keep requests are outstanding.
func (in *initiator) reap(tb testing.TB, outstanding *int, keep int) {
	for *outstanding > keep {
		k, err := in.jfc.Poll(in.crs)
		must(tb, err)
		for _, cr := range in.crs[:k] {
			if !cr.OK() {
				tb.Fatal(cr)
			}
		}
		*outstanding -= k
		if k == 0 {
			runtime.Gosched()
		}
	}
}

// BenchmarkXProcWriteLat8 is ib_write_lat across two processes: the peer
// answers each 8-byte WRITE with one; ns/op is half the round trip.
func BenchmarkXProcWriteLat8(b *testing.B) {
	p := startBenchPeer(b, "pong")
	in := newInitiator(b, p, 0)
	jfr, err := jetty.NewJFR(in.ctx, jetty.JFRConfig{JFC: in.jfc, Depth: 1})
	must(b, err)
	fmt.Fprintln(p.stdin, hexOf(in.local.Descriptor()), hexOf(jfr.Descriptor()))
	word := (*uint64)(unsafe.Pointer(&in.local.Bytes()[0]))
	src := in.local.SGE(8, 8)
	stop := make(chan struct{})
	var v uint64
	b.ResetTimer()
	for b.Loop() {
		v++
		binary.NativeEndian.PutUint64(in.local.Bytes()[8:], v)
		must(b, in.jfs.Write(in.remote, in.tgt.SGE(0, 8), src, 0, v))
		out := 1
		in.reap(b, &out, 0)
		spinUntilChange(word, v-1, stop)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/half-rtt")
}

// BenchmarkXProcWriteBW64K streams 64 KiB WRITEs into the other process's
// segment, 16 in flight.
func BenchmarkXProcWriteBW64K(b *testing.B) {
	p := startBenchPeer(b, "idle")
	in := newInitiator(b, p, 0)
	const size = 64 << 10
	b.SetBytes(size)
	out := 0
	var i uint64
	for b.Loop() {
		off := (i % 16) * size
		must(b, in.jfs.Write(in.remote, in.tgt.SGE(off, size), in.local.SGE(off, size), 0, i))
		i++
		out++
		in.reap(b, &out, 15)
	}
	in.reap(b, &out, 0)
}

// BenchmarkXProcSendRate8 sends 8-byte messages to a JFR of the other
// process, which reposts its receives as they complete.
func BenchmarkXProcSendRate8(b *testing.B) {
	p := startBenchPeer(b, "recv")
	in := newInitiator(b, p, 20*time.Microsecond)
	out := 0
	var i uint64
	for b.Loop() {
		must(b, in.jfs.Send(in.remote, in.local.SGE((i%64)*8, 8), 0, i))
		i++
		out++
		in.reap(b, &out, 63)
	}
	in.reap(b, &out, 0)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmsg/s")
}

// BenchmarkXProcSendPrepared8 is urmactl perf send_bw's loop across two
// processes: 8-byte prepared SENDs, one signaled in 64, into a JFR the
// peer keeps stocked.
func BenchmarkXProcSendPrepared8(b *testing.B) {
	p := startBenchPeer(b, "recv")
	in := newInitiator(b, p, 20*time.Microsecond)
	w := jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{in.local.SGE(0, 8)}, To: in.remote}
	quiet, loud := prepareQuietLoud(b, in.jfs, w)
	out, sent := 0, 0
	for b.Loop() {
		sent++
		if sent%64 != 0 {
			must(b, quiet.Post())
			continue
		}
		must(b, loud.Post())
		out++
		in.reap(b, &out, 3)
	}
	in.reap(b, &out, 0)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmsg/s")
}

// BenchmarkXProcInbox8 streams 8-byte messages through an inbox (see
// docs/architecture.md) to a peer process that drains it, making a record
// of each: the transport of receiver-side delivery across processes, next
// to BenchmarkXProcSendPrepared8.
func BenchmarkXProcInbox8(b *testing.B) {
	const cells = 1024
	p := startBenchPeer(b, "inbox")
	src, err := loopback.NewInboxSource(cells)
	must(b, err)
	defer src.Close()
	fmt.Fprintln(p.stdin, os.Getpid(), src.FD, cells)
	msg := make([]byte, 8)
	// Untimed: the peer maps the inbox and the first laps fault pages in.
	for range 4 * cells {
		src.Put(msg)
	}
	for !src.Drained() {
		runtime.Gosched()
	}
	b.ResetTimer()
	for b.Loop() {
		src.Put(msg)
	}
	for !src.Drained() {
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmsg/s")
}
