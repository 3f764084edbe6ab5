package loopback

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// The tests here speak the control protocol by hand, as a process of the
// same user that does not use the SDK would: the owner's checks are all
// that stands in its way.

// openOwner opens a context in a private runtime directory.
func openOwner(t *testing.T) *lbContext {
	t.Helper()
	t.Setenv(EnvRuntimeDir, filepath.Join(t.TempDir(), "rt"))
	pc, err := theDevice.Open(0)
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	return pc.(*lbContext)
}

// rawDial connects to c's socket without the SDK.
func rawDial(t *testing.T, c *lbContext) *net.UnixConn {
	t.Helper()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: c.srv.path, Net: "unix"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// rawCall sends a request and reads its reply; the reply's fds are the
// caller's.
func rawCall(t *testing.T, conn *net.UnixConn, typ wire.Type, payload []byte) wire.Message {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	require.NoError(t, wire.Write(conn, wire.Message{Type: typ, Payload: payload}))
	m, err := wire.Read(conn, wire.ReplyLimit, 0)
	require.NoError(t, err)
	require.Equal(t, typ, m.Type)
	return m
}

func segFDRequest(s *segment) []byte { return (&wire.Buf{}).U32(s.handle).U32(s.ref.gen).Bytes }

func importSegRequest(s *segment, token uint32) []byte {
	b, _ := s.desc.MarshalBinary()
	return (&wire.Buf{Bytes: b}).U32(token).Bytes
}

func alloc(t *testing.T, c *lbContext, cfg provider.SegmentConfig) *segment {
	t.Helper()
	s, err := c.AllocSegment(4096, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s.(*segment)
}

// expectHangUp checks that the owner closes conn without answering its
// HELLO.
func expectHangUp(t *testing.T, conn *net.UnixConn, why string) {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_ = wire.Write(conn, wire.Message{Type: wire.Hello, Payload: (&wire.Buf{}).U32(1).Bytes})
	_, err := wire.Read(conn, wire.ReplyLimit, 0)
	require.Error(t, err, why)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "%s: it left the connection open", why)
}

// neverAnswer takes one connection on ln and reads a request it never
// answers, as a listener that only collects what importers send.
func neverAnswer(ln *net.UnixListener) {
	if conn, err := ln.AcceptUnix(); err == nil {
		defer conn.Close()
		_, _ = wire.Read(conn, wire.RequestLimit, 0)
	}
}

// expectRefused checks that a reply refuses with status want and hands out
// no descriptor.
func expectRefused(t *testing.T, m wire.Message, want provider.Status, what string) {
	t.Helper()
	defer m.CloseFDs()
	require.Equal(t, want, m.Status, "%s: %s", what, m.Payload)
	require.Empty(t, m.FDs, "%s: a refusal carries no descriptor", what)
}

// A segment's memory goes out by handle only to a peer that imported,
// with its token, a queue the segment is a receive buffer of: not to a
// peer without a token, and never a LOCAL_ONLY or READ-only segment that
// is no receive buffer.
func TestSegmentFDNeedsAnImportedQueue(t *testing.T) {
	c := openOwner(t)
	const jfrToken = 0x51
	private := alloc(t, c, provider.SegmentConfig{Access: provider.AccessLocalOnly})
	ro := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead, TokenPolicy: provider.TokenPlainText, Token: 7})
	buf := alloc(t, c, provider.SegmentConfig{Access: provider.AccessLocalOnly})
	jfc, err := c.NewJFC(provider.JFCConfig{Depth: 8})
	require.NoError(t, err)
	defer jfc.Close()
	jfr, err := c.NewJFR(provider.JFRConfig{Depth: 4, MaxSGE: 1, Mode: provider.RM, JFC: jfc,
		TokenPolicy: provider.TokenPlainText, Token: jfrToken})
	require.NoError(t, err)
	defer jfr.Close()
	_, err = jfr.PostRecv([]provider.RecvWR{{Local: []provider.SGE{{Seg: buf, Addr: buf.desc.VA, Len: 64}}}})
	require.NoError(t, err)

	conn := rawDial(t, c)
	for name, s := range map[string]*segment{"LOCAL_ONLY": private, "READ-only": ro, "receive buffer": buf} {
		expectRefused(t, rawCall(t, conn, wire.SegFD, segFDRequest(s)), provider.StatusPermission, name+" without an import")
	}
	jd, _ := jfr.Desc().MarshalBinary()
	expectRefused(t, rawCall(t, conn, wire.ImportJetty, (&wire.Buf{Bytes: jd}).U32(jfrToken+1).Bytes), provider.StatusPermission, "a JFR import with a wrong token")
	expectRefused(t, rawCall(t, conn, wire.SegFD, segFDRequest(buf)), provider.StatusPermission, "receive buffer after a refused import")

	m := rawCall(t, conn, wire.ImportJetty, (&wire.Buf{Bytes: jd}).U32(jfrToken).Bytes)
	require.Equal(t, provider.StatusSuccess, m.Status, "%s", m.Payload)
	m.CloseFDs()
	m = rawCall(t, conn, wire.SegFD, segFDRequest(buf))
	require.Equal(t, provider.StatusSuccess, m.Status, "%s", m.Payload)
	require.Len(t, m.FDs, 1)
	m.CloseFDs()
	for name, s := range map[string]*segment{"LOCAL_ONLY": private, "READ-only": ro} {
		expectRefused(t, rawCall(t, conn, wire.SegFD, segFDRequest(s)), provider.StatusPermission, name+" after a JFR import")
	}
	// The right is the connection's: another one has none.
	expectRefused(t, rawCall(t, rawDial(t, c), wire.SegFD, segFDRequest(buf)), provider.StatusPermission, "receive buffer on another connection")
}

// Rights are the owner's to enforce: a LOCAL_ONLY segment is not exported
// even with its token, and a READ-only one goes out as a memfd that can
// be mapped for reading only.
func TestImportRightsEnforcedByOwner(t *testing.T) {
	c := openOwner(t)
	private := alloc(t, c, provider.SegmentConfig{Access: provider.AccessLocalOnly, TokenPolicy: provider.TokenPlainText, Token: 3})
	ro := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead, TokenPolicy: provider.TokenPlainText, Token: 4})
	rw := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead | provider.AccessWrite, TokenPolicy: provider.TokenPlainText, Token: 5})
	conn := rawDial(t, c)

	expectRefused(t, rawCall(t, conn, wire.ImportSeg, importSegRequest(private, 3)), provider.StatusPermission, "LOCAL_ONLY with its token")
	expectRefused(t, rawCall(t, conn, wire.ImportSeg, importSegRequest(ro, 5)), provider.StatusPermission, "READ-only with a wrong token")

	m := rawCall(t, conn, wire.ImportSeg, importSegRequest(ro, 4))
	require.Equal(t, provider.StatusSuccess, m.Status, "%s", m.Payload)
	require.Len(t, m.FDs, 1)
	defer m.CloseFDs()
	fl, err := unix.FcntlInt(uintptr(m.FDs[0]), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Equal(t, unix.O_RDONLY, fl&unix.O_ACCMODE, "a READ-only grant's memfd is open for reading only")
	_, err = unix.Mmap(m.FDs[0], 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.ErrorIs(t, err, unix.EACCES, "a READ-only grant cannot be mapped for writing")
	mem, err := unix.Mmap(m.FDs[0], 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	ro.mem[0] = 0x5a
	require.Equal(t, byte(0x5a), mem[0], "it reads the segment")
	require.NoError(t, unix.Munmap(mem))

	m2 := rawCall(t, conn, wire.ImportSeg, importSegRequest(rw, 5))
	require.Equal(t, provider.StatusSuccess, m2.Status, "%s", m2.Payload)
	defer m2.CloseFDs()
	fl, err = unix.FcntlInt(uintptr(m2.FDs[0]), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Equal(t, unix.O_RDWR, fl&unix.O_ACCMODE, "a WRITE grant's memfd is writable")
}

// openAsOtherUser opens a context that takes this process's user for
// another, at both ends of its control connections.
func openAsOtherUser(t *testing.T) *lbContext {
	me := ownUID()
	ownUID = func() int { return me + 1 }
	defer func() { ownUID = os.Geteuid }()
	return openOwner(t)
}

// A context serves only processes of its own user, and an importer talks
// only to a context of its own user. The check uses the uids the kernel
// recorded for the connection; here both ends expect another uid than the
// one they have.
func TestPeersOfAnotherUserRefused(t *testing.T) {
	c := openAsOtherUser(t)
	// A listener in the place of a context that does not exist.
	fake := provider.SegmentDesc{EID: c.eid, UASID: c.uasid + 1, VA: 0x10000, Len: 4096, Access: provider.AccessRead, TokenID: 1}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(c.dir, sockName(fake.EID, fake.UASID)), Net: "unix"})
	require.NoError(t, err)
	defer ln.Close()
	go neverAnswer(ln)

	_, err = c.ImportSegment(t.Context(), fake, 0)
	require.ErrorIs(t, err, provider.ErrPermission)
	require.Contains(t, err.Error(), "not to this user")

	expectHangUp(t, rawDial(t, c), "the owner hangs up on a peer of another user without answering")
}

// The same, with a real process of another user: only root can make one.
func TestPeersOfAnotherUserRefusedForReal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user; TestPeersOfAnotherUserRefused checks the same with a substitute uid")
	}
	c := openOwner(t)
	// Let other users reach the socket, as a careless runtime directory
	// would.
	require.NoError(t, os.Chmod(c.dir, 0o777))
	for d := filepath.Dir(c.dir); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755)) // the test's temporary directories
	}
	require.NoError(t, os.Chmod(c.srv.path, 0o777))
	// The connection's credentials are the connecting thread's effective
	// ids at connect time; runtime.LockOSThread is not enough, since Go
	// applies setresuid to every thread.
	require.NoError(t, syscall.Setresuid(-1, 65534, -1))
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: c.srv.path, Net: "unix"})
	require.NoError(t, syscall.Setresuid(-1, 0, -1))
	require.NoError(t, err)
	defer conn.Close()
	expectHangUp(t, conn, "the owner hangs up on uid 65534")

	// A listener of another user in a context's place is not believed.
	s := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead})
	fake := s.desc
	fake.UASID++
	path := filepath.Join(c.dir, sockName(fake.EID, fake.UASID))
	require.NoError(t, syscall.Setresuid(-1, 65534, -1))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, syscall.Setresuid(-1, 0, -1))
	require.NoError(t, err)
	defer ln.Close()
	go neverAnswer(ln)
	_, err = c.ImportSegment(t.Context(), fake, 0)
	require.ErrorIs(t, err, provider.ErrPermission)
	require.Contains(t, err.Error(), "belongs to uid 65534")
}

// A process out of descriptors makes accept fail for a while; the context
// keeps listening and serves the connection once descriptors are back.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	c := openOwner(t)
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	restore := lim
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	lim.Cur = uint64(len(ents) + 64)
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &restore)
	var filler []int
	defer func() {
		for _, fd := range filler {
			unix.Close(fd)
		}
	}()
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			require.ErrorIs(t, err, unix.EMFILE)
			break
		}
		filler = append(filler, fd)
	}
	// One descriptor for our end of the connection; none for the
	// owner's accept.
	unix.Close(filler[len(filler)-1])
	filler = filler[:len(filler)-1]
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: c.srv.path, Net: "unix"})
	require.NoError(t, err)
	defer conn.Close()
	time.Sleep(50 * time.Millisecond) // accept fails meanwhile
	for _, fd := range filler {
		unix.Close(fd)
	}
	filler = nil
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &restore))
	m := rawCall(t, conn, wire.List, nil)
	require.Equal(t, provider.StatusSuccess, m.Status, "%s", m.Payload)
}

// Close does not wait for a peer that sends requests and never reads the
// replies.
func TestCloseWithPeerThatDoesNotRead(t *testing.T) {
	t.Setenv(EnvRuntimeDir, filepath.Join(t.TempDir(), "rt"))
	pc, err := theDevice.Open(0)
	require.NoError(t, err)
	c := pc.(*lbContext)
	conn := rawDial(t, c)
	// Fill both directions of the connection: the owner's replies back
	// up until its writes block.
	stuffed := make(chan struct{})
	go func() {
		defer close(stuffed)
		req := wire.Message{Type: wire.List}
		for wire.Write(conn, req) == nil {
		}
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	require.NoError(t, c.Close())
	require.Less(t, time.Since(start), time.Second, "Close waited on a peer that does not read")
	conn.Close()
	<-stuffed
}

// A peer cannot make the owner hold large buffers: a request longer than
// any legitimate one is refused at its header, and one that stops midway
// is dropped after partialTimeout.
func TestStalledConnectionsBounded(t *testing.T) {
	c := openOwner(t)
	hdr := func(size uint32) []byte {
		b := make([]byte, wire.HeaderSize)
		b[0] = byte(wire.List)
		b[8], b[9], b[10], b[11] = byte(size), byte(size>>8), byte(size>>16), byte(size>>24)
		return b
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const conns = 64
	var held []*net.UnixConn
	for range conns {
		conn := rawDial(t, c)
		// Declares the largest payload, sends 512 KiB of it and stalls.
		_, err := conn.Write(append(hdr(wire.MaxPayload), make([]byte, 512<<10)...))
		if err == nil {
			held = append(held, conn)
		}
	}
	time.Sleep(100 * time.Millisecond)
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	require.Less(t, grown, int64(8<<20), "%d stalled connections grew the heap by %d bytes", conns, grown)
	for _, conn := range held {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := wire.Read(conn, wire.ReplyLimit, 0)
		require.Error(t, err, "an oversized request ends its connection")
	}

	// A short request cut off midway.
	conn := rawDial(t, c)
	_, err := conn.Write(hdr(8)[:6])
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(partialTimeout+5*time.Second)))
	_, err = wire.Read(conn, wire.ReplyLimit, 0)
	require.Error(t, err)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the owner dropped the half-sent request")
}

// NOTIFY raises JFC_ERR only for a JFC the peer imported a queue of, and
// once until the application takes it, however many a peer sends.
func TestNotifyFloodBounded(t *testing.T) {
	c := openOwner(t)
	const token = 0x99
	cq, err := c.NewJFC(provider.JFCConfig{Depth: 8})
	require.NoError(t, err)
	defer cq.Close()
	jfr, err := c.NewJFR(provider.JFRConfig{Depth: 4, MaxSGE: 1, Mode: provider.RM, JFC: cq,
		TokenPolicy: provider.TokenPlainText, Token: token})
	require.NoError(t, err)
	defer jfr.Close()
	id := cq.(*jfc).id
	conn := rawDial(t, c)
	flood := func(n int) {
		for range n {
			require.NoError(t, wire.Write(conn, wire.Message{Type: wire.Notify, Payload: (&wire.Buf{}).U32(id).Bytes}))
		}
		// A request after the flood: its reply says the flood was read.
		rawCall(t, conn, wire.List, nil)
	}
	noEvent := func(why string) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.AsyncEvent(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, why)
	}

	flood(10000)
	noEvent("a peer that imported nothing cannot raise events")

	jd, _ := jfr.Desc().MarshalBinary()
	m := rawCall(t, conn, wire.ImportJetty, (&wire.Buf{Bytes: jd}).U32(token).Bytes)
	require.Equal(t, provider.StatusSuccess, m.Status, "%s", m.Payload)
	m.CloseFDs()
	flood(10000)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := c.AsyncEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, provider.EventJFCErr, ev.Type)
	require.NoError(t, c.AckAsyncEvent(ev))
	noEvent("10000 reports raise one event")
}

// A reply may carry only the descriptors its kind has: the importer
// closes any others, and believes a pid only from the kernel.
func TestImporterRefusesLyingOwner(t *testing.T) {
	c := openOwner(t)
	fake := provider.SegmentDesc{EID: c.eid, UASID: c.uasid + 1, VA: 0x10000, Len: 4096, Access: provider.AccessRead | provider.AccessWrite, TokenID: 1}
	path := filepath.Join(c.dir, sockName(fake.EID, fake.UASID))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	defer ln.Close()
	page, err := newCtlPage()
	require.NoError(t, err)
	defer page.release()
	counts, err := newCountPage()
	require.NoError(t, err)
	defer counts.m.Close()
	answered := make(chan struct{}, 8)
	// Serves HELLO properly, then answers every import with memory of
	// the caller kind in another process (pid 1), plus a stray fd.
	go func() {
		for {
			conn, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				for {
					req, err := wire.Read(conn, wire.RequestLimit, 0)
					if err != nil {
						return
					}
					reply := wire.Message{Type: req.Type}
					stray, _ := unix.MemfdCreate(strayName, unix.MFD_CLOEXEC)
					switch req.Type {
					case wire.Hello:
						fd, _ := dupFD(page.m.FD())
						cfd, _ := dupFD(counts.m.FD())
						reply.Payload = (&wire.Buf{}).U32(uint32(os.Getpid())).Bytes
						reply.FDs = []int{fd, cfd}
						unix.Close(stray)
					default:
						reply.Payload = wire.SegReply{Handle: 1, Gen: 1, Caller: true, PID: 1, VA: fake.VA, Len: fake.Len, Access: fake.Access}.Encode()
						reply.FDs = []int{stray}
					}
					_ = wire.Write(conn, reply)
					for _, fd := range reply.FDs {
						unix.Close(fd)
					}
					if req.Type != wire.Hello {
						answered <- struct{}{} // its own copies are closed
					}
				}
			}()
		}
	}()
	for range 3 {
		_, err = c.ImportSegment(t.Context(), fake, 0)
		require.ErrorIs(t, err, provider.ErrFail)
		require.Contains(t, err.Error(), "malformed segment reply")
		select {
		case <-answered:
		case <-time.After(5 * time.Second):
			t.Fatal("the fake owner did not finish its answer")
		}
	}
	require.Zero(t, openStrays(t), "the importer kept a descriptor the reply should not have carried")
}

// strayName names the memfds a lying owner slips into its replies.
const strayName = "urma-test-stray"

// openStrays counts this process's descriptors of stray memfds.
func openStrays(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.Contains(target, strayName) {
			n++
		}
	}
	return n
}

// EnvMaxPeers bounds the connections a context serves.
func TestMaxPeers(t *testing.T) {
	t.Setenv(EnvMaxPeers, "2")
	c := openOwner(t)
	a, b := rawDial(t, c), rawDial(t, c)
	rawCall(t, a, wire.List, nil)
	rawCall(t, b, wire.List, nil)
	expectHangUp(t, rawDial(t, c), "a third connection is refused")

	t.Setenv(EnvMaxPeers, "zero")
	_, err := theDevice.Open(0)
	require.ErrorIs(t, err, provider.ErrInvalid)
	require.Contains(t, err.Error(), EnvMaxPeers)
}

// Wrong tokens are answered at once only up to a burst; then the
// connection waits, one refusal per connFailEvery.
func TestWrongTokensSlowed(t *testing.T) {
	c := openOwner(t)
	s := alloc(t, c, provider.SegmentConfig{Access: provider.AccessRead, TokenPolicy: provider.TokenPlainText, Token: 1})
	conn := rawDial(t, c)
	const extra = 4
	start := time.Now()
	for i := range connFailBurst + extra {
		expectRefused(t, rawCall(t, conn, wire.ImportSeg, importSegRequest(s, uint32(100+i))), provider.StatusPermission, "a wrong token")
	}
	require.GreaterOrEqual(t, time.Since(start), (extra-1)*connFailEvery, "refusals past the burst are spaced out")
	m := rawCall(t, conn, wire.ImportSeg, importSegRequest(s, 1))
	require.Equal(t, provider.StatusSuccess, m.Status, "the right token still imports")
	m.CloseFDs()
}

// What a peer writes where it may write, its own count page, holds up only
// the caller memory it was handed, drainTimeout once, and keeps that memory
// only until it disconnects. The segments' entries it can only read.
func TestPeerCountsBounded(t *testing.T) {
	c := openOwner(t)
	conn := rawDial(t, c)
	hello := rawCall(t, conn, wire.Hello, (&wire.Buf{}).U32(1).Bytes)
	require.Equal(t, provider.StatusSuccess, hello.Status, "%s", hello.Payload)
	require.Len(t, hello.FDs, 2)
	defer hello.CloseFDs()
	_, err := unix.Mmap(hello.FDs[0], 0, int(ctlPageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.ErrorIs(t, err, unix.EACCES, "a peer cannot map the segments' entries for writing")
	counts, err := unix.Mmap(hello.FDs[1], 0, countPageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(counts)
	for i := range counts { // every access count of every handle stays up
		counts[i] = 0x7f
	}

	register := func(token uint32) *segment {
		s, err := c.RegisterSegment(make([]byte, 4096), provider.SegmentConfig{Access: provider.AccessRead | provider.AccessWrite,
			TokenPolicy: provider.TokenPlainText, Token: token})
		require.NoError(t, err)
		return s.(*segment)
	}
	timedClose := func(s *segment) time.Duration {
		start := time.Now()
		require.NoError(t, s.Close())
		return time.Since(start)
	}
	base := len(quarantinedNow())

	x := register(1) // never handed to the peer
	require.Less(t, timedClose(x), drainTimeout/2, "a segment the peer does not hold waited for its count")
	require.Len(t, quarantinedNow(), base)

	y, z := register(2), register(3)
	for _, s := range []*segment{y, z} {
		m := rawCall(t, conn, wire.ImportSeg, importSegRequest(s, s.token))
		require.Equal(t, provider.StatusSuccess, m.Status, "%s", m.Payload)
		m.CloseFDs()
	}
	require.GreaterOrEqual(t, timedClose(y), drainTimeout, "the peer's count holds up the memory it holds")
	require.Contains(t, quarantinedNow(), y)
	require.Less(t, timedClose(z), drainTimeout/2, "a peer whose count stayed up is not waited for again")
	require.Contains(t, quarantinedNow(), z)

	conn.Close()
	require.Eventually(t, func() bool { return len(quarantinedNow()) == base }, 5*time.Second, time.Millisecond,
		"the memory a peer held leaves quarantine when it disconnects")
}

func quarantinedNow() []*segment {
	quarantined.mu.Lock()
	defer quarantined.mu.Unlock()
	var segs []*segment
	for s := range quarantined.entries {
		segs = append(segs, s)
	}
	return segs
}

// A failed connect says why: a full backlog is a busy context, not a
// missing one, and a refused one is a permission, said once.
func TestDialErrorsSayWhy(t *testing.T) {
	k := fabricKey{uasid: 7}
	path := filepath.Join(t.TempDir(), "ctx.sock")
	cases := []struct {
		err  error
		want error
		text string
	}{
		{unix.EAGAIN, provider.ErrBusy, "listen backlog is full"},
		{unix.ENOENT, provider.ErrNotFound, "no context at eid"},
		{unix.EACCES, provider.ErrPermission, "may not use the socket"},
		{unix.EMFILE, provider.ErrAgain, "out of file descriptors"},
	}
	for _, c := range cases {
		err := dialErr(&net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", c.err)}, path, k)
		require.ErrorIs(t, err, c.want, "%v", c.err)
		require.Contains(t, err.Error(), c.text)
	}
	err := dialErr(&net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", unix.EACCES)}, path, k)
	require.Equal(t, 1, strings.Count(err.Error(), "permission denied"), "%v", err)
}
