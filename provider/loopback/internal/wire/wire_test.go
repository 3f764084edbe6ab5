package wire

import (
	"bytes"
	"encoding/binary"
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

// readRaw feeds b to Read as a peer would send it, then hangs up. It
// also returns the bytes Read allocated.
func readRaw(t *testing.T, b []byte) (Message, uint64, error) {
	w, r := socketPair(t)
	defer r.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Write(b) // fails once r is closed, if Read stopped early
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
// travels the same through Write, and memory follows the bytes sent,
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

		// What Read decoded, Write must send identically.
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
