package loopback_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/provider/providertest"
	"github.com/urma-go/sdk/provider/providertest/remote"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// xproc is a test with its own runtime directory, a local context a and a
// context b that lives in a peer process and is driven through a proxy.
type xproc struct {
	dir  string
	peer *remote.Peer
	a, b *urma.Context
}

func newXProc(t *testing.T) *xproc {
	t.Helper()
	x := &xproc{dir: filepath.Join(t.TempDir(), "rt")} // created 0700 by the provider
	t.Setenv(loopback.EnvRuntimeDir, x.dir)
	p, err := remote.Start()
	require.NoError(t, err)
	x.peer = p
	t.Cleanup(func() { p.Close() })
	x.b, err = p.Open(loopback.DeviceName, 1)
	require.NoError(t, err)
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	x.a, err = urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { x.a.Close() })
	return x
}

// pollN waits for n records on jfc, failing after d.
func pollN(t *testing.T, jfc *jetty.JFC, n int, d time.Duration) []jetty.CR {
	t.Helper()
	out := make([]jetty.CR, 0, n)
	buf := make([]jetty.CR, 16)
	deadline := time.Now().Add(d)
	for len(out) < n {
		k, err := jfc.Poll(buf[:min(16, n-len(out))])
		require.NoError(t, err)
		out = append(out, buf[:k]...)
		if k == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d records after %v: %v", len(out), n, d, out)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	return out
}

func sendSide(t *testing.T, ctx *urma.Context, cfg jetty.JFSConfig) (*jetty.JFS, *jetty.JFC) {
	t.Helper()
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 1024})
	require.NoError(t, err)
	cfg.JFC = jfc
	jfs, err := jetty.NewJFS(ctx, cfg)
	require.NoError(t, err)
	return jfs, jfc
}

// peerJFR creates a JFR in the peer and imports it here.
func (x *xproc) peerJFR(t *testing.T, depth int) (*jetty.JFR, *jetty.JFC, *jetty.Remote) {
	t.Helper()
	jfc, err := jetty.NewJFC(x.b, jetty.JFCConfig{Depth: 4 * depth})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(x.b, jetty.JFRConfig{Depth: depth, JFC: jfc})
	require.NoError(t, err)
	r, err := jetty.ImportJFR(context.Background(), x.a, jfr.Descriptor(), 0)
	require.NoError(t, err)
	return jfr, jfc, r
}

func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		require.NoError(t, err)
		// The state follows the parenthesised command name.
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && (f[0] == "T" || f[0] == "t") {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d did not stop", pid)
}

// One-sided requests must not need the target's CPU: with the target
// process stopped, WRITE, READ, CAS and FADD still complete with the right
// data.
func TestXProcStoppedTarget(t *testing.T) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.Read | segment.Write | segment.Atomic})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	_, _, rem := x.peerJFR(t, 4)
	local, err := segment.Alloc(x.a, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
	pattern := []byte("one-sided requests run in the initiator; the target sleeps.")
	copy(local.Bytes(), pattern)

	require.NoError(t, x.peer.Process().Signal(syscall.SIGSTOP))
	waitStopped(t, x.peer.Pid())
	n := uint32(len(pattern))
	require.NoError(t, jfs.Write(rem, tgt.SGE(0, n), local.SGE(0, n), 0, 1))
	require.NoError(t, jfs.Read(rem, tgt.SGE(0, n), local.SGE(1024, n), 0, 2))
	require.NoError(t, jfs.CompareSwap(rem, tgt.SGE(512, 8), local.SGE(2048, 8), 0, 7, 0, 3))
	require.NoError(t, jfs.FetchAdd(rem, tgt.SGE(512, 8), local.SGE(2056, 8), 5, 0, 4))
	require.NoError(t, jfs.CompareSwap(rem, tgt.SGE(512, 8), local.SGE(2064, 8), 7, 100, 0, 5)) // fails: value is 12
	crs := pollN(t, jfc, 5, 5*time.Second)
	for i, cr := range crs {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(i+1), cr.UserCtx)
	}
	require.Equal(t, pattern, local.Bytes()[1024:1024+n], "READ returns what WRITE put there")
	require.Equal(t, uint64(0), ne64(local.Bytes()[2048:]), "CAS old value")
	require.Equal(t, uint64(7), ne64(local.Bytes()[2056:]), "FADD old value")
	require.Equal(t, uint64(12), ne64(local.Bytes()[2064:]), "failed CAS returns the current value")

	require.NoError(t, x.peer.Process().Signal(syscall.SIGCONT))
	require.Equal(t, pattern, seg.Bytes()[:n], "the target sees the data once it runs again")
	require.Equal(t, uint64(12), ne64(seg.Bytes()[512:]))
}

// SENDs to a stopped target complete too: they go to the target queue's
// inbox, and the sender, finding the receiver still, delivers them itself.
func TestXProcSendStoppedTarget(t *testing.T) {
	x := newXProc(t)
	jfr, rjfc, rem := x.peerJFR(t, 8)
	rbuf, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	for k := range 4 {
		require.NoError(t, jfr.Recv(rbuf.SGE(uint64(k)*64, 64), uint64(k)))
	}
	local, err := segment.Alloc(x.a, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	msg := []byte("stopped target")
	copy(local.Bytes(), msg)
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
	// The first SEND maps the receive buffers' segment, which asks the
	// target: it must be running.
	require.NoError(t, jfs.Send(rem, local.SGE(0, uint32(len(msg))), 0, 0))
	pollN(t, jfc, 1, 5*time.Second)

	require.NoError(t, x.peer.Process().Signal(syscall.SIGSTOP))
	waitStopped(t, x.peer.Pid())
	for k := 1; k < 4; k++ {
		require.NoError(t, jfs.Send(rem, local.SGE(0, uint32(len(msg))), 0, uint64(k)))
	}
	for k, cr := range pollN(t, jfc, 3, 5*time.Second) {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(k+1), cr.UserCtx)
	}
	require.True(t, loopback.InboxPeer(jfs.Raw()), "the SENDs did not go through the target's inbox")

	require.NoError(t, x.peer.Process().Signal(syscall.SIGCONT))
	for k, cr := range pollN(t, rjfc, 4, 5*time.Second) {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, uint64(k), cr.UserCtx)
		require.Equal(t, uint32(len(msg)), cr.Len)
		require.Equal(t, msg, rbuf.Bytes()[k*64:k*64+len(msg)])
	}
}

// A peer killed with SENDs of this process in its queue's inbox, not
// delivered: the oldest fails with the loss's status and the queue goes to
// ERROR, the next is flushed, as for SENDs waiting for a receive there. An
// RC jetty bound to a jetty of the peer, which the loss moves to ERROR
// itself, still reports the failure with a record.
func TestXProcInboxPeerKilled(t *testing.T) {
	defer loopback.SetInboxTick(time.Hour)() // this sender does not deliver them itself
	for _, rc := range []bool{false, true} {
		t.Run(fmt.Sprintf("rc=%v", rc), func(t *testing.T) { inboxPeerKilled(t, rc) })
	}
}

type sendQueue interface {
	Send(to *jetty.Remote, src segment.SGE, flags jetty.Flags, userCtx uint64) error
	Flush(crs []jetty.CR) (int, error)
}

func inboxPeerKilled(t *testing.T, rc bool) {
	x := newXProc(t)
	jfc, err := jetty.NewJFC(x.a, jetty.JFCConfig{Depth: 512})
	require.NoError(t, err)
	var sq sendQueue
	var raw any
	var rem *jetty.Remote
	var recv func(segment.SGE, uint64) error
	if rc {
		pjfc, err := jetty.NewJFC(x.b, jetty.JFCConfig{Depth: 512})
		require.NoError(t, err)
		pj, err := jetty.NewJetty(x.b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: pjfc, Mode: urma.RC}, Recv: jetty.JFRConfig{JFC: pjfc}})
		require.NoError(t, err)
		j, err := jetty.NewJetty(x.a, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc, Mode: urma.RC}, Recv: jetty.JFRConfig{JFC: jfc}})
		require.NoError(t, err)
		rem, err = jetty.ImportJetty(context.Background(), x.a, pj.Descriptor(), 0)
		require.NoError(t, err)
		require.NoError(t, j.Bind(context.Background(), rem))
		sq, raw, recv = j, j.Raw(), pj.Recv
	} else {
		jfr, _, r := x.peerJFR(t, 8)
		jfs, err := jetty.NewJFS(x.a, jetty.JFSConfig{JFC: jfc})
		require.NoError(t, err)
		sq, raw, rem, recv = jfs, jfs.Raw(), r, jfr.Recv
	}
	rbuf, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	for k := range 4 {
		require.NoError(t, recv(rbuf.SGE(uint64(k)*64, 64), uint64(k)))
	}
	local, err := segment.Alloc(x.a, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	// A first SEND maps the receive buffers' segment, asking the target.
	require.NoError(t, sq.Send(rem, local.SGE(0, 8), 0, 9))
	pollN(t, jfc, 1, 5*time.Second)
	require.NoError(t, x.peer.Process().Signal(syscall.SIGSTOP))
	waitStopped(t, x.peer.Pid())
	for k := range 3 { // the first goes the usual way, the others to the inbox
		require.NoError(t, sq.Send(rem, local.SGE(0, 8), 0, uint64(k)))
	}
	require.True(t, loopback.InboxPeer(raw), "the SENDs did not go through the target's inbox")
	require.NoError(t, x.peer.Process().Kill())

	// The SENDs that found the stopped peer's receives themselves
	// completed; how many did depends on when each post looked (at least
	// the first). The first one left in the inbox fails with the peer,
	// the ones after it are flushed.
	var ok int
	for {
		cr := pollN(t, jfc, 1, 5*time.Second)[0]
		if cr.Status != urma.CRSuccess {
			require.Equal(t, urma.CRAckTimeoutErr, cr.Status, "%v", cr)
			require.Equal(t, uint64(ok), cr.UserCtx, "%v", cr)
			break
		}
		require.Equal(t, uint64(ok), cr.UserCtx, "%v", cr)
		ok++
		require.Less(t, ok, 3, "every SEND completed although the peer was stopped")
	}
	require.GreaterOrEqual(t, ok, 1, "the first SEND did not go the usual way")
	flushed := make([]jetty.CR, 4)
	n, err := sq.Flush(flushed)
	require.NoError(t, err)
	require.Equal(t, 2-ok, n, "%v", flushed[:n])
	for i := range n {
		require.Equal(t, urma.CRWRFlushErr, flushed[i].Status)
		require.Equal(t, uint64(ok+1+i), flushed[i].UserCtx)
	}
}

// A peer killed at a random point of a stream of requests: every pending
// request completes with an error, later ones too, the survivor gets an
// async event, nothing hangs and no file stays in the runtime directory.
func TestXProcPeerKilled(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 5
	}
	for i := range runs {
		killOnce(t, i)
	}
}

func killOnce(t *testing.T, run int) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 1<<16, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	jfr, _, rem := x.peerJFR(t, 64)
	rbuf, err := segment.Alloc(x.b, 1<<16, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	for k := range 8 { // fewer receives than sends: the rest wait in RNR
		require.NoError(t, jfr.Recv(rbuf.SGE(uint64(k)*256, 256), uint64(k)))
	}
	local, err := segment.Alloc(x.a, 1<<16, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{Depth: 256, RNRRetry: 7, RNRTimeout: time.Millisecond})

	killAt := time.Duration(rand.IntN(20_000)) * time.Microsecond
	killed := time.AfterFunc(killAt, func() { x.peer.Process().Kill() })
	defer killed.Stop()
	posted, done, failed := 0, 0, 0
	crs := make([]jetty.CR, 64)
	deadline := time.Now().Add(killAt + 5*time.Second)
	var lastErr time.Time
	for failed == 0 {
		require.True(t, time.Now().Before(deadline), "run %d: no error record %v after the kill", run, time.Since(deadline.Add(-5*time.Second)))
		if posted-done < 200 {
			op := posted % 3
			var err error
			switch op {
			case 0:
				err = jfs.Send(rem, local.SGE(0, 64), 0, uint64(posted))
			case 1:
				err = jfs.Write(rem, tgt.SGE(4096, 4096), local.SGE(4096, 4096), 0, uint64(posted))
			default:
				err = jfs.Read(rem, tgt.SGE(0, 4096), local.SGE(8192, 4096), 0, uint64(posted))
			}
			if err == nil {
				posted++
			} else {
				require.ErrorIs(t, err, urma.ErrBadState, "run %d: post after the queue failed", run)
			}
		}
		k, err := jfc.Poll(crs)
		require.NoError(t, err)
		for _, cr := range crs[:k] {
			done++
			if !cr.OK() {
				failed++
				lastErr = time.Now()
				require.Contains(t, []urma.CRStatus{urma.CRAckTimeoutErr, urma.CRRemAccessAbortErr}, cr.Status, "run %d: %v", run, cr)
			}
		}
	}
	// The queue is in ERROR; whatever was still queued is flushed.
	require.Eventually(t, func() bool {
		a, err := jfs.Query()
		return err == nil && a.State == urma.StateError
	}, time.Second, time.Millisecond)
	flushed := 0
	for {
		n, err := jfs.Flush(crs)
		require.NoError(t, err)
		for _, cr := range crs[:n] {
			require.Equal(t, urma.CRWRFlushErr, cr.Status)
		}
		flushed += n
		if n == 0 {
			break
		}
	}
	require.Equal(t, posted, done+flushed, "run %d: every request completes (%d done, %d flushed)", run, done, flushed)
	require.Less(t, time.Since(lastErr), 5*time.Second)

	ev, err := x.a.GetAsyncEventTimeout(time.Second)
	require.NoError(t, err, "run %d: the survivor gets an async event", run)
	require.Equal(t, urma.EventJFSErr, ev.Type)
	require.Same(t, jfs, ev.Object)
	require.NoError(t, ev.Ack())

	// A request posted later fails at once too.
	jfs2, jfc2 := sendSide(t, x.a, jetty.JFSConfig{})
	start := time.Now()
	require.NoError(t, jfs2.Write(rem, tgt.SGE(0, 8), local.SGE(0, 8), 0, 99))
	cr := pollN(t, jfc2, 1, time.Second)[0]
	require.Equal(t, urma.CRAckTimeoutErr, cr.Status, "%v", cr)
	require.Less(t, time.Since(start), time.Second)
	_, err = segment.Import(context.Background(), x.a, seg.Descriptor(), 0)
	require.ErrorIs(t, err, urma.ErrNotFound, "the dead context is not importable")

	require.NoError(t, x.a.Close())
	x.peer.Close()
	require.Empty(t, dirEntries(t, x.dir), "run %d: files left behind", run)
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// Protection across processes gives the same errors as in one process.
func TestXProcProtection(t *testing.T) {
	x := newXProc(t)
	cfg := segment.Config{Access: segment.Read | segment.Write | segment.Atomic, TokenPolicy: segment.TokenPlainText, Token: 0x5eed}
	seg, err := segment.Alloc(x.b, 4096, cfg)
	require.NoError(t, err)
	_, err = segment.Import(context.Background(), x.a, seg.Descriptor(), 0x5eee)
	require.ErrorIs(t, err, urma.ErrPermission, "wrong token")
	altered := seg.Descriptor()
	altered.Len++
	_, err = segment.Import(context.Background(), x.a, altered, 0x5eed)
	require.ErrorIs(t, err, urma.ErrInvalid, "altered descriptor")
	altered = seg.Descriptor()
	altered.TokenID += 100
	_, err = segment.Import(context.Background(), x.a, altered, 0x5eed)
	require.ErrorIs(t, err, urma.ErrNotFound, "unknown token id")
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0x5eed)
	require.NoError(t, err)

	ro, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.Read})
	require.NoError(t, err)
	roT, err := segment.Import(context.Background(), x.a, ro.Descriptor(), 0)
	require.NoError(t, err)
	_, _, rem := x.peerJFR(t, 4)
	local, err := segment.Alloc(x.a, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	fill := bytes.Repeat([]byte{0xab}, 64)
	copy(local.Bytes(), fill)

	cases := []struct {
		name string
		wr   jetty.WR
		mem  []byte
	}{
		{"write out of bounds", jetty.WR{Opcode: urma.OpWrite, Local: []segment.SGE{local.SGE(0, 64)}, Remote: tgt.SGE(4096-32, 64)}, seg.Bytes()},
		{"read out of bounds", jetty.WR{Opcode: urma.OpRead, Local: []segment.SGE{local.SGE(0, 64)}, Remote: tgt.SGE(4090, 64)}, nil},
		{"write to read-only", jetty.WR{Opcode: urma.OpWrite, Local: []segment.SGE{local.SGE(0, 8)}, Remote: roT.SGE(0, 8)}, ro.Bytes()},
		{"atomic without ATOMIC", jetty.WR{Opcode: urma.OpFAdd, Operand: 1, Local: []segment.SGE{local.SGE(0, 8)}, Remote: roT.SGE(0, 8)}, ro.Bytes()},
	}
	for _, c := range cases {
		jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
		c.wr.To, c.wr.Flags, c.wr.UserCtx = rem, jetty.Signaled, 42
		require.NoError(t, jfs.Post([]jetty.WR{c.wr}), c.name)
		cr := pollN(t, jfc, 1, 5*time.Second)[0]
		require.Equal(t, urma.CRRemAccessAbortErr, cr.Status, "%s: %v", c.name, cr)
		require.Equal(t, uint64(42), cr.UserCtx)
		if c.mem != nil {
			require.Equal(t, make([]byte, len(c.mem)), c.mem, "%s: no byte touched", c.name)
		}
	}

	jfc, err := jetty.NewJFC(x.b, jetty.JFCConfig{})
	require.NoError(t, err)
	tokJFR, err := jetty.NewJFR(x.b, jetty.JFRConfig{JFC: jfc, TokenPolicy: segment.TokenPlainText, Token: 9})
	require.NoError(t, err)
	_, err = jetty.ImportJFR(context.Background(), x.a, tokJFR.Descriptor(), 8)
	require.ErrorIs(t, err, urma.ErrPermission, "wrong jfr token")
}

// Caller memory of another process: WRITE, READ and SEND reach it by
// copying, atomics are refused at post time.
func TestXProcCallerMemory(t *testing.T) {
	x := newXProc(t)
	buf, err := x.peer.CallerMemory(8192)
	require.NoError(t, err)
	seg, err := segment.Register(x.b, buf[:4096], segment.Config{Access: segment.Read | segment.Write | segment.Atomic})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	jfr, rjfc, rem := x.peerJFR(t, 4)
	rseg, err := segment.Register(x.b, buf[4096:], segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	require.NoError(t, jfr.Recv(rseg.SGE(100, 200), 77))

	local, err := segment.Alloc(x.a, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	msg := []byte("copied into the registered memory of another process")
	copy(local.Bytes(), msg)
	n := uint32(len(msg))
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
	require.NoError(t, jfs.Write(rem, tgt.SGE(10, n), local.SGE(0, n), 0, 1))
	require.NoError(t, jfs.Read(rem, tgt.SGE(10, n), local.SGE(1000, n), 0, 2))
	require.NoError(t, jfs.Send(rem, local.SGE(0, n), 0, 3))
	for _, cr := range pollN(t, jfc, 3, 5*time.Second) {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	}
	require.Equal(t, msg, buf[10:10+n])
	require.Equal(t, msg, local.Bytes()[1000:1000+n])
	rcr := pollN(t, rjfc, 1, 5*time.Second)[0]
	require.Equal(t, urma.CRSuccess, rcr.Status)
	require.Equal(t, uint64(77), rcr.UserCtx)
	require.Equal(t, n, rcr.Len)
	require.Equal(t, msg, buf[4096+100:4096+100+n])

	err = jfs.FetchAdd(rem, tgt.SGE(0, 8), local.SGE(0, 8), 1, 0, 4)
	require.ErrorIs(t, err, urma.ErrNotSupported)
}

// A JFCE.Wait blocked in the peer wakes when this process completes a
// message into its JFC, and sleeps meanwhile instead of spinning.
func TestXProcEventWakes(t *testing.T) {
	x := newXProc(t)
	jfce, err := jetty.NewJFCE(x.b)
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(x.b, jetty.JFCConfig{JFCE: jfce})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(x.b, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	rem, err := jetty.ImportJFR(context.Background(), x.a, jfr.Descriptor(), 0)
	require.NoError(t, err)
	rbuf, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	require.NoError(t, jfr.Recv(rbuf.SGE(0, 64), 5))
	require.NoError(t, jfc.Rearm(false))

	woke := make(chan error, 1)
	go func() {
		out := make([]*jetty.JFC, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n, err := jfce.Wait(ctx, out)
		if err == nil && (n != 1 || out[0] != jfc) {
			err = os.ErrInvalid
		}
		woke <- err
	}()
	cpu0 := cpuTime(t, x.peer.Pid())
	time.Sleep(300 * time.Millisecond)
	cpu := cpuTime(t, x.peer.Pid()) - cpu0
	require.Less(t, cpu, 100*time.Millisecond, "the waiting peer used %v of CPU in 300 ms: it spins", cpu)
	select {
	case err := <-woke:
		t.Fatalf("Wait returned before any completion: %v", err)
	default:
	}

	local, err := segment.Alloc(x.a, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	jfs, sjfc := sendSide(t, x.a, jetty.JFSConfig{})
	require.NoError(t, jfs.Send(rem, local.SGE(0, 16), jetty.Solicited, 1))
	pollN(t, sjfc, 1, 5*time.Second)
	select {
	case err := <-woke:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Wait in the peer did not wake")
	}
	cr := pollN(t, jfc, 1, time.Second)[0]
	require.Equal(t, uint64(5), cr.UserCtx)
	require.NoError(t, jfc.Ack(1))
}

// cpuTime is the user+system time of a process, from /proc.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	// Fields after the name: state is f[0], utime f[11], stime f[12] (clock ticks).
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// The runtime directory is private to its user.
func TestRuntimeDirPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rt")
	t.Setenv(loopback.EnvRuntimeDir, dir)
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	ctx, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	defer ctx.Close()
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.Len(t, dirEntries(t, dir), 1, "one socket per context")

	if os.Geteuid() == 0 {
		// Another user can neither list the directory nor reach a socket.
		for _, args := range [][]string{{"ls", dir}, {"cat", filepath.Join(dir, dirEntries(t, dir)[0])}} {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%v as nobody: %s", args, out)
			require.Contains(t, string(out), "Permission denied")
		}
	} else {
		t.Log("not root: the check as another user is skipped; the mode check above still ran")
	}

	// A directory open to others, or someone else's, is refused.
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o755))
	t.Setenv(loopback.EnvRuntimeDir, open)
	_, err = urma.Open(dev, 0, nil)
	require.ErrorIs(t, err, urma.ErrPermission)
	require.Contains(t, err.Error(), "0700")
	if os.Geteuid() == 0 {
		theirs := filepath.Join(t.TempDir(), "theirs")
		require.NoError(t, os.Mkdir(theirs, 0o700))
		require.NoError(t, os.Chown(theirs, 65534, 65534))
		t.Setenv(loopback.EnvRuntimeDir, theirs)
		_, err = urma.Open(dev, 0, nil)
		require.ErrorIs(t, err, urma.ErrPermission)
	}
}

// Inspect sees the contexts and segments of another process.
func TestXProcInspect(t *testing.T) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 8192, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	x.peerJFR(t, 8)
	infos, err := loopback.Inspect(x.dir, time.Second)
	require.NoError(t, err)
	require.Len(t, infos, 2)
	var found bool
	for _, ci := range infos {
		if ci.PID != x.peer.Pid() {
			continue
		}
		require.Equal(t, x.b.UASID(), ci.UASID)
		for _, s := range ci.Segments {
			if s.VA == seg.VA() {
				found = true
				require.Equal(t, uint64(8192), s.Len)
				require.Equal(t, "shared", s.Memory)
			}
		}
		require.NotEmpty(t, ci.Jetties)
	}
	require.True(t, found, "the peer's segment is listed: %+v", infos)
}

func ne64(b []byte) uint64 { return binary.NativeEndian.Uint64(b) }

// TestConformanceCrossProcess runs the conformance suite with the target
// context in a peer process: every import, one-sided request, message and
// completion crosses the process boundary through shared memory.
func TestConformanceCrossProcess(t *testing.T) {
	p, err := remote.Start()
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	providertest.Run(t, providertest.Harness{Pair: func(t testing.TB) (*urma.Context, *urma.Context) {
		a, err := urma.Open(dev, 0, nil)
		require.NoError(t, err)
		b, err := p.Open(loopback.DeviceName, 1)
		require.NoError(t, err)
		return a, b
	}})
}

// An inbox made by this process carries messages of every length to a
// process that maps it, whole and in order, over many laps of the ring.
func TestXProcInbox(t *testing.T) {
	const cells, n = 64, 20000
	p := startBenchPeer(t, "inbox-check")
	src, err := loopback.NewInboxSource(cells)
	require.NoError(t, err)
	defer src.Close()
	fmt.Fprintln(p.stdin, os.Getpid(), src.FD, cells, n)
	// A peer that stopped reading (it found a bad message) leaves the
	// inbox full: the sender then stops too and reports what it said.
	deadline := time.Now().Add(10 * time.Second)
	for i := uint64(0); i < n && time.Now().Before(deadline); {
		if src.TryPutImm(i, loopback.InboxCheckMsg(i)) {
			i++
		}
	}
	line := "\n" // the end of the descriptors' line comes first
	for line == "\n" {
		line, err = p.out.ReadString('\n')
		require.NoError(t, err)
	}
	require.Equal(t, "ok\n", line)
}
