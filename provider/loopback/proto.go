package loopback

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// The control protocol between a context and the processes that import from
// it runs over its unix socket: one request, one reply, in order. A message
// is a 12-byte header {type u8, 3 reserved, status i32, length u32}, then
// length bytes of payload, little-endian; file descriptors (memfds of
// segments and rings, eventfds) travel with it as SCM_RIGHTS. A reply's
// status is a provider.Status; a failed reply's payload is the error text.
type msgType uint8

const (
	msgHello       msgType = iota + 1 // {pid u32} -> {pid u32} + page fd (read-only), count page fd
	msgImportSeg                      // {desc [48], token u32} -> segReply + memfd (allocated memory)
	msgSegFD                          // {handle u32, gen u32} -> segReply + memfd (a receive buffer)
	msgImportJetty                    // {desc [32], token u32} -> jettyReply + ring, jfc ring, eventfd, inbox fds
	msgList                           // {} -> JSON ContextInfo
	msgNotify                         // {jfc id u32}: a record was dropped
	msgBye                            // sent by a closing context to its importers; no reply
)

const (
	msgHeader = 12
	// maxPayload bounds what a peer can make us allocate: a LIST reply,
	// which describes every segment and queue of a context.
	maxPayload = 64 << 20
	// maxRequest bounds a request: the largest, an import, is a
	// descriptor and a token.
	maxRequest = 256
	// maxReply bounds every other reply: a segment's or queue's
	// description, or an error's text.
	maxReply = 4 << 10
	maxFDs   = 4
)

// requestLimit is the largest payload the owner reads for a request.
func requestLimit(msgType) uint32 { return maxRequest }

// replyLimit is the largest payload an importer reads for a reply of type t.
func replyLimit(t msgType) uint32 {
	if t == msgList {
		return maxPayload
	}
	return maxReply
}

type message struct {
	typ     msgType
	status  provider.Status
	payload []byte
	fds     []int
}

func (m *message) err() error {
	if m.status == provider.StatusSuccess {
		return nil
	}
	return provider.Errorf(m.status, "peer: %s", m.payload)
}

// closeFDs closes descriptors that came with a message and were not used.
func (m *message) closeFDs() {
	for _, fd := range m.fds {
		unix.Close(fd)
	}
	m.fds = nil
}

func writeMsg(c *net.UnixConn, m message) error {
	b := make([]byte, msgHeader, msgHeader+len(m.payload))
	b[0] = byte(m.typ)
	binary.LittleEndian.PutUint32(b[4:], uint32(m.status))
	binary.LittleEndian.PutUint32(b[8:], uint32(len(m.payload)))
	b = append(b, m.payload...)
	var oob []byte
	if len(m.fds) > 0 {
		oob = unix.UnixRights(m.fds...)
	}
	n, _, err := c.WriteMsgUnix(b, oob, nil)
	if err != nil {
		return err
	}
	if n < len(b) {
		_, err = c.Write(b[n:])
	}
	return err
}

// readMsg reads one message whose payload is at most limit(its type)
// bytes. Once its first bytes are in, the rest must come within partial
// (0: no limit), so that a peer cannot hold a half-sent message, and the
// buffer for it, open for ever.
func readMsg(c *net.UnixConn, limit func(msgType) uint32, partial time.Duration) (message, error) {
	var hdr [msgHeader]byte
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	n, oobn, _, _, err := c.ReadMsgUnix(hdr[:], oob)
	if err != nil {
		return message{}, err
	}
	var m message
	if oobn > 0 {
		m.fds = parseRights(oob[:oobn])
	}
	if n == 0 {
		m.closeFDs()
		return message{}, io.EOF
	}
	if partial > 0 {
		if err := c.SetReadDeadline(time.Now().Add(partial)); err != nil {
			m.closeFDs()
			return message{}, err
		}
		defer c.SetReadDeadline(time.Time{})
	}
	if _, err := io.ReadFull(c, hdr[n:]); err != nil {
		m.closeFDs()
		return message{}, err
	}
	m.typ = msgType(hdr[0])
	m.status = provider.Status(int32(binary.LittleEndian.Uint32(hdr[4:])))
	size := binary.LittleEndian.Uint32(hdr[8:])
	if size > limit(m.typ) {
		m.closeFDs()
		return message{}, provider.Errorf(provider.ErrInvalid, "control message of type %d has %d bytes, more than its %d", m.typ, size, limit(m.typ))
	}
	if m.payload, err = readPayload(c, int(size)); err != nil {
		m.closeFDs()
		return message{}, err
	}
	return m, nil
}

// payloadChunk is how far readPayload trusts a declared length ahead of
// the bytes that back it.
const payloadChunk = 64 << 10

// readPayload reads size bytes, growing the buffer as they arrive: a header
// that declares maxPayload and is followed by nothing would otherwise cost
// 64 MiB for every connection that sends one.
func readPayload(r io.Reader, size int) ([]byte, error) {
	b := make([]byte, 0, min(size, payloadChunk))
	for len(b) < size {
		n := min(size-len(b), payloadChunk)
		b = slices.Grow(b, n)
		if _, err := io.ReadFull(r, b[len(b):len(b)+n]); err != nil {
			return nil, err
		}
		b = b[:len(b)+n]
	}
	return b, nil
}

func parseRights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		// unix.ParseUnixRights indexes past the end of its result when the
		// data is not whole descriptors. The kernel only sends whole ones;
		// take those and never the stray bytes.
		msgs[i].Data = msgs[i].Data[:len(msgs[i].Data)&^3]
		if r, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, r...)
		}
	}
	return fds
}

// wire is a little-endian encoder and decoder for payloads. A decoder that
// runs past the end records it in short, so callers check once.
type wire struct {
	b     []byte
	short bool
}

func (w *wire) u32(v uint32) *wire { w.b = binary.LittleEndian.AppendUint32(w.b, v); return w }
func (w *wire) u64(v uint64) *wire { w.b = binary.LittleEndian.AppendUint64(w.b, v); return w }

func (w *wire) take(n int) []byte {
	if len(w.b) < n {
		w.short = true
		return make([]byte, n)
	}
	v := w.b[:n]
	w.b = w.b[n:]
	return v
}

func (w *wire) getU32() uint32 { return binary.LittleEndian.Uint32(w.take(4)) }
func (w *wire) getU64() uint64 { return binary.LittleEndian.Uint64(w.take(8)) }

// segReply describes segment memory: where the owner has it and how this
// process reaches it (a memfd of size bytes, or process_vm_* into pid).
type segReply struct {
	handle, gen uint32
	caller      bool // caller memory: no memfd, reach it through pid
	pid         uint32
	va, len     uint64
	size        uint64 // bytes to map from the memfd
	access      provider.Access
}

func (r segReply) encode() []byte {
	var w wire
	caller := uint32(0)
	if r.caller {
		caller = 1
	}
	return w.u32(r.handle).u32(r.gen).u32(caller).u32(r.pid).u64(r.va).u64(r.len).u64(r.size).u32(uint32(r.access)).b
}

func decodeSegReply(b []byte) (segReply, bool) {
	w := wire{b: b}
	r := segReply{handle: w.getU32(), gen: w.getU32(), caller: w.getU32() == 1, pid: w.getU32(),
		va: w.getU64(), len: w.getU64(), size: w.getU64(), access: provider.Access(w.getU32())}
	return r, !w.short
}

// jettyReply describes a receive queue and its JFC for a sender.
type jettyReply struct {
	id, maxSGE, depth uint32
	slotSize          uint64
	crFlags           uint32
	jfcID, jfcDepth   uint32
	jfcSlotSize       uint64
	hasEventfd        uint32
	inboxCells        uint32 // 0: no inbox (its fd is then absent)
}

func (r jettyReply) encode() []byte {
	var w wire
	return w.u32(r.id).u32(r.maxSGE).u32(r.depth).u64(r.slotSize).u32(r.crFlags).
		u32(r.jfcID).u32(r.jfcDepth).u64(r.jfcSlotSize).u32(r.hasEventfd).u32(r.inboxCells).b
}

func decodeJettyReply(b []byte) (jettyReply, bool) {
	w := wire{b: b}
	r := jettyReply{id: w.getU32(), maxSGE: w.getU32(), depth: w.getU32(), slotSize: w.getU64(),
		crFlags: w.getU32(), jfcID: w.getU32(), jfcDepth: w.getU32(), jfcSlotSize: w.getU64(), hasEventfd: w.getU32(),
		inboxCells: w.getU32()}
	return r, !w.short
}
