package loopback_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/providertest"
	"github.com/urma-go/sdk/provider/providertest/remote"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// startPeer starts a peer process for the test and ends it when the test
// ends.
func startPeer(t *testing.T) *remote.Peer {
	t.Helper()
	p, err := remote.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// openPair opens two contexts in the peer, on EIDs 0 and 1 of loopback0.
func openPair(t *testing.T, p *remote.Peer) (*urma.Context, *urma.Context) {
	t.Helper()
	a, err := p.Open("loopback0", 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b, err := p.Open("loopback0", 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return a, b
}

// TestConformanceProxied runs the conformance suite with both contexts in
// one peer process, driven through the remote proxy: the data path is the
// peer's, in process, so a failure here that TestConformance does not have
// is the proxy's.
func TestConformanceProxied(t *testing.T) {
	p := startPeer(t)
	providertest.Run(t, providertest.Harness{Pair: func(t testing.TB) (*urma.Context, *urma.Context) {
		a, err := p.Open("loopback0", 0)
		require.NoError(t, err)
		b, err := p.Open("loopback0", 1)
		require.NoError(t, err)
		return a, b
	}})
}

func TestRemoteDevice(t *testing.T) {
	p := startPeer(t)
	a, _ := openPair(t, p)
	local, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	require.NotEqual(t, "loopback0", a.Device().Name(), "the proxy device must not shadow the real one")
	want := local.Attr()
	require.True(t, want.MapImports)
	want.MapImports = false // a proxied import is the peer's, which this process cannot map
	require.Equal(t, want, a.Device().Attr())
	require.Equal(t, local.EIDs(), a.Device().EIDs())
	require.Equal(t, local.EIDs()[0], a.EID())
	_, err = p.Open("nosuchdevice", 0)
	require.ErrorIs(t, err, urma.ErrNotFound)
}

func TestRemoteErrors(t *testing.T) {
	p := startPeer(t)
	a, b := openPair(t, p)

	_, err := jetty.NewJFC(a, jetty.JFCConfig{Depth: 1 << 20})
	require.ErrorIs(t, err, urma.ErrInvalid)
	require.ErrorIs(t, err, syscall.EINVAL)
	require.Contains(t, err.Error(), "1048576", "the peer's detail survives")
	require.Equal(t, 1, strings.Count(err.Error(), "invalid argument"), "status text once: %v", err)

	s, err := segment.Alloc(b, 64, segment.Config{Access: segment.Read, TokenPolicy: segment.TokenPlainText, Token: 7})
	require.NoError(t, err)
	_, err = segment.Import(t.Context(), a, s.Descriptor(), 8)
	require.ErrorIs(t, err, urma.ErrPermission)

	_, err = segment.Register(a, make([]byte, 64), segment.Config{Access: segment.Read})
	require.ErrorIs(t, err, urma.ErrNotSupported)
	require.Contains(t, err.Error(), "CallerMemory")

	jfc, err := jetty.NewJFC(a, jetty.JFCConfig{})
	require.NoError(t, err)
	jfs, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: jfc})
	require.NoError(t, err)
	require.ErrorIs(t, jfc.Close(), urma.ErrBusy)
	require.NoError(t, jfs.Close())
	require.NoError(t, jfc.Close())
	_, err = jfc.Poll(make([]jetty.CR, 1))
	require.ErrorIs(t, err, urma.ErrClosed)

	// A request naming a segment of this process, which the peer cannot
	// reach: its provider refuses it like any foreign object, and the
	// request before it is queued.
	lctx := openLocal(t)
	foreign, err := segment.Alloc(lctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	jfc2, err := jetty.NewJFC(a, jetty.JFCConfig{})
	require.NoError(t, err)
	jfs2, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: jfc2})
	require.NoError(t, err)
	r := newRemoteJFR(t, b, a)
	err = jfs2.Post([]jetty.WR{
		{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: 1},
		{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r, Local: []segment.SGE{foreign.SGE(0, 8)}},
	})
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 1, pe.Index)
	require.ErrorIs(t, err, urma.ErrInvalid)
	require.Equal(t, uint64(1), pollOne(t, jfc2).UserCtx)

	require.NoError(t, a.Close())
	_, err = segment.Alloc(a, 64, segment.Config{Access: segment.Read})
	require.ErrorIs(t, err, urma.ErrClosed)
	_, err = jfs2.Query()
	require.ErrorIs(t, err, urma.ErrClosed)
}

func TestRemoteOwners(t *testing.T) {
	p := startPeer(t)
	a, b := openPair(t, p)

	ce, err := jetty.NewJFCE(a)
	require.NoError(t, err)
	j1, err := jetty.NewJFC(a, jetty.JFCConfig{JFCE: ce})
	require.NoError(t, err)
	j2, err := jetty.NewJFC(a, jetty.JFCConfig{JFCE: ce})
	require.NoError(t, err)
	s2, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: j2})
	require.NoError(t, err)
	require.NoError(t, j1.Rearm(false))
	require.NoError(t, j2.Rearm(false))
	require.NoError(t, s2.NOP(0, 1))
	out := make([]*jetty.JFC, 2)
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	n, err := ce.Wait(wctx, out)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Same(t, j2, out[0])
	require.NoError(t, j2.Ack(1))

	// A failed write raises JFS_ERR naming the JFS; a JFC overrun raises
	// JFC_ERR naming the JFC.
	s1, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: j1})
	require.NoError(t, err)
	r := newRemoteJFR(t, b, a)
	mem, err := segment.Alloc(b, 64, segment.Config{Access: segment.Read})
	require.NoError(t, err)
	tg, err := segment.Import(t.Context(), a, mem.Descriptor(), 0)
	require.NoError(t, err)
	l, err := segment.Alloc(a, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	require.NoError(t, s1.Write(r, tg.SGE(0, 8), l.SGE(0, 8), 0, 1), "write to a read-only segment")
	small, err := jetty.NewJFC(a, jetty.JFCConfig{Depth: 1, AllowOverrun: true}) // overflows on purpose
	require.NoError(t, err)
	s3, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: small})
	require.NoError(t, err)
	require.NoError(t, s3.NOP(0, 2))
	require.NoError(t, s3.NOP(0, 3))
	seen := map[any]urma.EventType{}
	for range 2 {
		ev, err := a.GetAsyncEventTimeout(5 * time.Second)
		require.NoError(t, err)
		seen[ev.Object] = ev.Type
		require.NoError(t, ev.Ack())
		require.ErrorIs(t, ev.Ack(), urma.ErrInvalid, "second ack of one event")
	}
	require.Equal(t, map[any]urma.EventType{s1: urma.EventJFSErr, small: urma.EventJFCErr}, seen)

	// Cancellation and deadlines reach the peer's wait.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err = a.GetAsyncEvent(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), time.Second)
	_, err = a.GetAsyncEventTimeout(10 * time.Millisecond)
	require.ErrorIs(t, err, urma.ErrTimeout)
}

func TestRemoteMemory(t *testing.T) {
	p := startPeer(t)
	a, b := openPair(t, p)
	r := newRemoteJFR(t, b, a)
	jfc, err := jetty.NewJFC(a, jetty.JFCConfig{})
	require.NoError(t, err)
	jfs, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: jfc})
	require.NoError(t, err)

	// Allocated segments: this process and the peer see the same bytes.
	src, err := segment.Alloc(b, 4096, segment.Config{Access: segment.Read})
	require.NoError(t, err)
	copy(src.Bytes(), "written here, read there")
	tg, err := segment.Import(t.Context(), a, src.Descriptor(), 0)
	require.NoError(t, err)
	l, err := segment.Alloc(a, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	require.NoError(t, jfs.Read(r, tg.SGE(0, 24), l.SGE(0, 24), 0, 1))
	require.Equal(t, urma.CRSuccess, pollOne(t, jfc).Status)
	require.Equal(t, "written here, read there", string(l.Bytes()[:24]))

	// Caller memory: a registered range is the same memory as the slice
	// it was registered over.
	buf, err := p.CallerMemory(300)
	require.NoError(t, err)
	require.Len(t, buf, 300)
	seg, err := segment.Register(b, buf[100:200], segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	require.Len(t, seg.Bytes(), 100)
	require.Equal(t, unsafe.Pointer(&buf[100]), unsafe.Pointer(&seg.Bytes()[0]))
	dst, err := segment.Import(t.Context(), a, seg.Descriptor(), 0)
	require.NoError(t, err)
	copy(l.Bytes(), "into caller memory")
	require.NoError(t, jfs.Write(r, dst.SGE(10, 18), l.SGE(0, 18), 0, 2))
	require.Equal(t, urma.CRSuccess, pollOne(t, jfc).Status)
	require.Equal(t, "into caller memory", string(buf[110:128]))
	require.Equal(t, make([]byte, 110), buf[:110])
	require.Equal(t, make([]byte, 172), buf[128:])
	m, ok := a.Raw().(remote.CallerMemoryProvider)
	require.True(t, ok)
	_, err = m.CallerMemory(0)
	require.ErrorIs(t, err, urma.ErrInvalid)

	require.NoError(t, src.Unregister())
	require.Nil(t, src.Bytes(), "memory of a closed segment")
}

// TestRemotePeerKilled kills the peer under calls that block in it and
// checks that they, and every later call, fail promptly with ErrClosed.
func TestRemotePeerKilled(t *testing.T) {
	p := startPeer(t)
	a, err := p.Open("loopback0", 0)
	require.NoError(t, err)
	ce, err := jetty.NewJFCE(a)
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(a, jetty.JFCConfig{JFCE: ce})
	require.NoError(t, err)
	jfs, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: jfc})
	require.NoError(t, err)
	seg, err := segment.Alloc(a, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	copy(seg.Bytes(), "outlives the peer")
	require.NoError(t, jfc.Rearm(false))

	waitDone := make(chan error, 1)
	go func() {
		_, err := ce.Wait(context.Background(), make([]*jetty.JFC, 1))
		waitDone <- err
	}()
	eventDone := make(chan error, 1)
	go func() {
		_, err := a.GetAsyncEvent(context.Background())
		eventDone <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-waitDone:
		t.Fatalf("wait returned before the peer died: %v", err)
	case err := <-eventDone:
		t.Fatalf("async event wait returned before the peer died: %v", err)
	default:
	}

	require.NoError(t, p.Process().Kill())
	deadline := time.After(time.Second)
	for _, ch := range []chan error{waitDone, eventDone} {
		select {
		case err := <-ch:
			require.ErrorIs(t, err, urma.ErrClosed)
		case <-deadline:
			t.Fatal("a blocked call did not return within a second of the peer's death")
		}
	}
	start := time.Now()
	_, err = jfc.Poll(make([]jetty.CR, 1))
	require.ErrorIs(t, err, urma.ErrClosed)
	require.ErrorIs(t, jfs.NOP(0, 1), urma.ErrClosed)
	_, err = jetty.NewJFC(a, jetty.JFCConfig{})
	require.ErrorIs(t, err, urma.ErrClosed)
	_, err = p.Open("loopback0", 1)
	require.ErrorIs(t, err, urma.ErrClosed)
	require.Equal(t, "outlives the peer", string(seg.Bytes()[:17]), "the mapping keeps the memory")
	require.NoError(t, jfs.Close())
	require.NoError(t, jfc.Close())
	require.NoError(t, ce.Close())
	require.NoError(t, seg.Unregister())
	require.NoError(t, a.Close())
	require.Less(t, time.Since(start), time.Second)
}

// TestRemotePeerStopped: a stopped peer answers nothing until continued,
// and Close ends it even while it is stopped.
func TestRemotePeerStopped(t *testing.T) {
	p := startPeer(t)
	a, err := p.Open("loopback0", 0)
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(a, jetty.JFCConfig{})
	require.NoError(t, err)

	require.NoError(t, p.Process().Signal(syscall.SIGSTOP))
	waitStopped(t, p.Pid()) // the signal is delivered asynchronously
	done := make(chan error, 1)
	go func() {
		_, err := jfc.Poll(make([]jetty.CR, 1))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("poll answered by a stopped peer: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, p.Process().Signal(syscall.SIGCONT))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("poll did not complete after SIGCONT")
	}

	require.NoError(t, p.Process().Signal(syscall.SIGSTOP))
	start := time.Now()
	require.NoError(t, p.Close())
	require.Less(t, time.Since(start), 3*time.Second)
	_, err = jfc.Poll(make([]jetty.CR, 1))
	require.ErrorIs(t, err, urma.ErrClosed)
	assert.NoError(t, a.Close())
}

// newRemoteJFR creates a JFR on ctx and imports it into into.
func newRemoteJFR(t *testing.T, ctx, into *urma.Context) *jetty.Remote {
	t.Helper()
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(ctx, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	r, err := jetty.ImportJFR(t.Context(), into, jfr.Descriptor(), 0)
	require.NoError(t, err)
	return r
}

// openLocal opens a context of this process.
func openLocal(t *testing.T) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	c, err := urma.Open(dev, 2, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func pollOne(t *testing.T, jfc *jetty.JFC) jetty.CR {
	t.Helper()
	crs := make([]jetty.CR, 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := jfc.Poll(crs)
		require.NoError(t, err)
		if n == 1 {
			return crs[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no completion record within 5s")
		}
		time.Sleep(100 * time.Microsecond)
	}
}
