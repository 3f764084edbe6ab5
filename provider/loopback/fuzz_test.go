package loopback

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// The control protocol is spoken by other processes of the host, which may
// be older, newer or broken builds: every decoder of it must turn garbage
// into an error, and nothing a peer declares may cost more memory than
// what it actually sends.

// socketPair returns the two ends of a connected unix stream socket.
func socketPair(t testing.TB) (a, b *net.UnixConn) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		require.NoError(t, err)
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// readRaw feeds b to readMsg as a peer would send it, then hangs up. It
// also returns the bytes readMsg allocated.
func readRaw(t *testing.T, b []byte) (Message, uint64, error) {
	w, r := socketPair(t)
	defer r.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Write(b) // fails once r is closed, if readMsg stopped early
		w.Close()
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := Read(r, ReplyLimit, 0)
	runtime.ReadMemStats(&after)
	r.Close()
	<-done
	return m, after.TotalAlloc - before.TotalAlloc, err
}

// FuzzReadMsg: the framing of every message on a context's socket. A
// message is delivered exactly when all the bytes its header declares
// arrived, a declared length past the type's limit is refused, what is delivered
// travels the same through writeMsg, and memory follows the bytes sent,
// not the length declared.
func FuzzReadMsg(f *testing.F) {
	hdr := func(typ Type, status provider.Status, size uint32, payload string) []byte {
		b := make([]byte, HeaderSize)
		b[0] = byte(typ)
		binary.LittleEndian.PutUint32(b[4:], uint32(status))
		binary.LittleEndian.PutUint32(b[8:], size)
		return append(b, payload...)
	}
	f.Add(hdr(Hello, 0, 4, "\x01\x02\x03\x04"))
	f.Add(hdr(List, provider.StatusNotFound, 5, "nope!"))
	f.Add(hdr(Bye, 0, 0, ""))
	f.Add(hdr(ImportSeg, 0, 10, "short"))
	f.Add(hdr(ImportSeg, 0, MaxPayload+1, ""))
	f.Add(hdr(ImportSeg, 0, 1<<32-1, ""))
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, alloc, err := readRaw(t, b)
		// The fixed costs (the control buffer, the connection, the race
		// detector's and the fuzzer's own bookkeeping) stay far below this;
		// what grows must grow with what the peer sent.
		require.LessOrEqual(t, alloc, uint64(1<<20+4*len(b)), "allocated %d bytes for a %d-byte message", alloc, len(b))
		if len(b) >= HeaderSize && binary.LittleEndian.Uint32(b[8:]) > ReplyLimit(Type(b[0])) {
			require.ErrorIs(t, err, provider.ErrInvalid)
			return
		}
		if len(b) < HeaderSize || len(b) < HeaderSize+int(binary.LittleEndian.Uint32(b[8:])) {
			require.Error(t, err, "a message cut short must not be delivered")
			return
		}
		require.NoError(t, err)
		require.Empty(t, m.FDs)
		require.Equal(t, Type(b[0]), m.Type)
		require.Equal(t, provider.Status(int32(binary.LittleEndian.Uint32(b[4:]))), m.Status)
		require.Equal(t, b[HeaderSize:HeaderSize+len(m.Payload)], m.Payload)
		require.Len(t, m.Payload, int(binary.LittleEndian.Uint32(b[8:])))

		// What readMsg decoded, writeMsg must send identically.
		w, r := socketPair(t)
		defer r.Close()
		werr := make(chan error, 1)
		go func() {
			werr <- Write(w, m) // concurrently: a large payload fills the socket
			w.Close()
		}()
		again, err := Read(r, ReplyLimit, 0)
		require.NoError(t, err)
		require.NoError(t, <-werr)
		require.Equal(t, m.Type, again.Type)
		require.Equal(t, m.Status, again.Status)
		require.True(t, bytes.Equal(m.Payload, again.Payload), "payload changed on the way")
	})
}

// FuzzReplies: the segment and jetty replies come from the owner of what
// was imported. Each decodes exactly when it holds all of its fields, and
// what it decodes encodes to a reply that decodes the same.
func FuzzReplies(f *testing.F) {
	f.Add(SegReply{Handle: 3, Gen: 7, PID: 1234, VA: 0x7f0000001000, Len: 4096, Size: 8192,
		Access: provider.AccessRead | provider.AccessWrite}.Encode())
	f.Add(SegReply{Handle: 1, Caller: true, PID: 99, VA: 1, Len: 1, Access: provider.AccessRead}.Encode())
	f.Add(JettyReply{ID: 9, MaxSGE: 2, Depth: 64, SlotSize: 128, CRFlags: 1, JFCID: 3, JFCDepth: 128,
		JFCSlotSize: 64, HasEventfd: 1, InboxCells: 256}.Encode())
	f.Add(make([]byte, 43))
	f.Add(make([]byte, 47))
	f.Fuzz(func(t *testing.T, b []byte) {
		const segReplyLen, jettyReplyLen = 44, 48

		sr, ok := DecodeSegReply(b)
		require.Equal(t, len(b) >= segReplyLen, ok, "segment reply of %d bytes", len(b))
		if ok {
			again, ok := DecodeSegReply(sr.Encode())
			require.True(t, ok)
			require.Equal(t, sr, again)
		}

		jr, ok := DecodeJettyReply(b)
		require.Equal(t, len(b) >= jettyReplyLen, ok, "jetty reply of %d bytes", len(b))
		if ok {
			// Every field is a full word: the encoding is the input itself.
			require.Equal(t, b[:jettyReplyLen], jr.Encode())
		}
	})
}

// FuzzParseRights: the control data of a received message. The kernel
// builds it, but from whatever the peer passed; parseRights must return
// the descriptors of a well-formed one and nothing for a malformed one.
func FuzzParseRights(f *testing.F) {
	f.Add(unix.UnixRights(3, 4), int32(5), int32(6))
	f.Add(unix.UnixRights(), int32(0), int32(-1))
	f.Add([]byte{}, int32(7), int32(8))
	f.Add(unix.UnixCredentials(&unix.Ucred{Pid: 1}), int32(9), int32(10))
	f.Add(make([]byte, unix.CmsgSpace(4)-1), int32(11), int32(12))
	f.Fuzz(func(t *testing.T, oob []byte, a, b int32) {
		fds := parseRights(oob)
		require.LessOrEqual(t, 4*len(fds), len(oob))

		// Prepend a known SCM_RIGHTS message: it must come out first when
		// the rest is well-formed, and the whole must be refused when not.
		got := parseRights(append(unix.UnixRights(int(a), int(b)), oob...))
		if _, err := unix.ParseSocketControlMessage(oob); err != nil {
			require.Nil(t, got)
			return
		}
		require.Equal(t, append([]int{int(a), int(b)}, fds...), got)
	})
}

// FuzzHandle feeds control requests to a live context's server, as another
// process would send them. The oracle knows the context's two segments and
// one JFR: a request succeeds exactly when it names them correctly, carries
// all of its fields and nothing more, and the peer may have it (a segment
// by handle only as a receive buffer of the JFR it imported), and the
// reply then describes them.
func FuzzHandle(f *testing.F) {
	const segToken, jfrToken = 0x5e65e6, 0x1f41f4
	pc, err := theDevice.Open(0)
	require.NoError(f, err)
	c := pc.(*lbContext)
	f.Cleanup(func() { require.NoError(f, c.Close()) })
	seg, err := c.AllocSegment(4096, provider.SegmentConfig{Access: provider.AccessRead | provider.AccessWrite,
		TokenPolicy: provider.TokenPlainText, Token: segToken})
	require.NoError(f, err)
	// A segment without a token: nothing but the request's shape stands
	// between a peer and an import of it.
	open, err := c.AllocSegment(4096, provider.SegmentConfig{Access: provider.AccessRead})
	require.NoError(f, err)
	jfc, err := c.NewJFC(provider.JFCConfig{Depth: 8})
	require.NoError(f, err)
	jfr, err := c.NewJFR(provider.JFRConfig{Depth: 4, MaxSGE: 1, Mode: provider.RM,
		TokenPolicy: provider.TokenPlainText, Token: jfrToken, JFC: jfc})
	require.NoError(f, err)
	f.Cleanup(func() {
		require.NoError(f, jfr.Close())
		require.NoError(f, jfc.Close())
		require.NoError(f, open.Close())
		require.NoError(f, seg.Close())
	})

	// seg is a receive buffer of jfr; open is not.
	_, err = jfr.PostRecv([]provider.RecvWR{{Local: []provider.SGE{{Seg: seg, Addr: seg.Desc().VA, Len: 64}}}})
	require.NoError(f, err)
	// Refusals are not slowed down here: the fuzzer makes them by the
	// thousand.
	c.srv.fails.every = 0

	segs := map[provider.SegmentDesc]uint32{seg.Desc(): segToken, open.Desc(): 0}
	u32 := func(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
	segDesc, _ := seg.Desc().MarshalBinary()
	openDesc, _ := open.Desc().MarshalBinary()
	jfrDesc, _ := jfr.Desc().MarshalBinary()
	lseg, lopen := seg.(*segment), open.(*segment)
	// Random bytes never name a live object, so a request is a known
	// prefix (a descriptor or a handle, picked by the fuzzer) followed by
	// bytes the fuzzer makes up: the checks after the names get explored.
	prefixes := [][]byte{
		nil,
		segDesc,
		openDesc,
		jfrDesc,
		u32(u32(nil, lseg.handle), lseg.ref.gen),
		u32(u32(nil, lopen.handle), lopen.ref.gen),
	}

	f.Add(uint8(ImportSeg), uint8(1), u32(nil, segToken))
	f.Add(uint8(ImportSeg), uint8(1), u32(nil, segToken+1))
	f.Add(uint8(ImportSeg), uint8(2), u32(nil, 0))
	f.Add(uint8(ImportSeg), uint8(0), u32(append([]byte{}, openDesc...), 0))
	f.Add(uint8(SegFD), uint8(4), []byte{})
	f.Add(uint8(SegFD), uint8(0), u32(nil, lseg.handle))
	f.Add(uint8(ImportJetty), uint8(3), u32(nil, jfrToken))
	f.Add(uint8(ImportJetty), uint8(3), []byte{1, 2, 3})
	f.Add(uint8(List), uint8(0), []byte{})
	f.Add(uint8(Hello), uint8(0), u32(nil, 1))
	f.Add(uint8(Notify), uint8(0), u32(nil, 1))
	f.Add(uint8(0), uint8(0), []byte{})
	f.Add(uint8(200), uint8(0), []byte{})

	jfrImport := u32(append([]byte{}, jfrDesc...), jfrToken)
	f.Add(uint8(SegFD), uint8(0x84), []byte{})
	f.Add(uint8(SegFD), uint8(0x85), []byte{})

	f.Fuzz(func(t *testing.T, typ, prefix uint8, tail []byte) {
		payload := append(append([]byte{}, prefixes[int(prefix&0x7f)%len(prefixes)]...), tail...)
		cc := newCtlConn(nil, 1)
		defer cc.release()
		cc.fails.every = 0
		imported := prefix&0x80 != 0 // the peer imported the JFR first
		if imported {
			reply, fds := c.srv.handle(cc, Message{Type: ImportJetty, Payload: jfrImport})
			require.Equal(t, provider.StatusSuccess, reply.Status, "%s", reply.Payload)
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
		reply, fds := c.srv.handle(cc, Message{Type: Type(typ), Payload: payload})
		defer func() {
			for _, fd := range fds {
				unix.Close(fd)
			}
		}()
		require.Equal(t, Type(typ), reply.Type)
		require.Equal(t, reply.FDs, fds)
		if reply.Status != provider.StatusSuccess {
			require.Empty(t, fds, "a refusal must not hand out descriptors")
		}
		switch Type(typ) {
		case ImportSeg:
			var d provider.SegmentDesc
			var token uint32
			ok := false
			if len(payload) == provider.SegmentDescSize+4 && d.UnmarshalBinary(payload[:provider.SegmentDescSize]) == nil {
				token = binary.LittleEndian.Uint32(payload[provider.SegmentDescSize:])
				if want, known := segs[d]; known {
					ok = d.TokenPolicy == provider.TokenNone || token == want
				}
			}
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "import of %v with token %#x: %v %s",
				d, token, reply.Status, reply.Payload)
			if !ok {
				return
			}
			r, decoded := DecodeSegReply(reply.Payload)
			require.True(t, decoded)
			require.Equal(t, []any{d.VA, d.Len, d.Access}, []any{r.VA, r.Len, r.Access})
			require.Len(t, fds, 1, "allocated memory travels as a memfd")
		case SegFD:
			ok := imported && len(payload) == 8 && binary.LittleEndian.Uint32(payload) == lseg.handle &&
				binary.LittleEndian.Uint32(payload[4:]) == lseg.ref.gen
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "%v %s", reply.Status, reply.Payload)
		case ImportJetty:
			ok := len(payload) == provider.JettyDescSize+4 && bytes.Equal(payload[:provider.JettyDescSize], jfrDesc) &&
				binary.LittleEndian.Uint32(payload[provider.JettyDescSize:]) == jfrToken
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "%v %s", reply.Status, reply.Payload)
			if !ok {
				return
			}
			r, decoded := DecodeJettyReply(reply.Payload)
			require.True(t, decoded)
			require.Equal(t, jfr.Desc().ID.ID, r.ID)
			require.NotZero(t, r.InboxCells, "every queue has an inbox")
			require.Len(t, fds, 3+int(r.HasEventfd))
		case List:
			require.Equal(t, provider.StatusSuccess, reply.Status)
			var ci ContextInfo
			require.NoError(t, json.Unmarshal(reply.Payload, &ci))
		case Hello:
			require.Equal(t, provider.StatusSuccess, reply.Status)
			require.Len(t, fds, 2, "the context page and the connection's count page")
		default:
			require.Equal(t, provider.StatusNotSupported, reply.Status)
		}
	})
}
