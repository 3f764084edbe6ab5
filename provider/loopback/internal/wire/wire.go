// Package wire is the loopback provider's control protocol as it travels:
// the framing of its messages, the limits a reader holds a peer to, and the
// encoding of their payloads. What a request does, and who may make it, is
// the provider's (server.go and peer.go); this package only moves bytes
// and descriptors, and turns whatever a peer sends into a message or an
// error without letting the peer decide how much memory or time that costs.
//
// The protocol runs over a context's unix socket: one request, one reply,
// in order. A message is a 12-byte header {type u8, 3 reserved, status i32,
// length u32}, then length bytes of payload, little-endian; file
// descriptors (memfds of segments and rings, eventfds) travel with it as
// SCM_RIGHTS. A reply's status is a provider.Status; a failed reply's
// payload is the error text.
package wire

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// Type is a message's type: a request's, which its reply repeats.
type Type uint8

// The message types, with their request and reply payloads.

const (
	Hello       Type = iota + 1 // {pid u32} -> {pid u32} + page fd (read-only), count page fd
	ImportSeg                   // {desc [48], token u32} -> SegReply + memfd (allocated memory)
	SegFD                       // {handle u32, gen u32} -> SegReply + memfd (a receive buffer)
	ImportJetty                 // {desc [32], token u32} -> JettyReply + ring, jfc ring, eventfd, inbox fds
	List                        // {} -> JSON ContextInfo
	Notify                      // {jfc id u32}: a record was dropped
	Bye                         // sent by a closing context to its importers; no reply
	// InvalidateSeg asks the owner to invalidate a segment for a
	// SEND_INVALIDATE: {desc [48], token u32} -> {}.
	InvalidateSeg
	// NotifyLimit {rq id u32}: a message left a receive queue's posted
	// receives below its threshold; no reply.
	NotifyLimit
	// Ping: {payload} -> the same payload, answered by the context's
	// server; at most MaxPing bytes either way.
	Ping

	// ImportGroup asks for a jetty group's members:
	// {desc [32], token u32} -> {policy u32, count u32, ids u32...}.
	ImportGroup

	// ResolvePort asks for the Jetty a context published under a port:
	// {port u16} -> {desc [32], token u32}; ErrNotFound when none is.
	ResolvePort
)

const (
	// HeaderSize is the size of a message's header.
	HeaderSize = 12
	// MaxPayload bounds what a peer can make us allocate: a LIST reply,
	// which describes every segment and queue of a context.
	MaxPayload = 64 << 20
	// maxRequest bounds a request: the largest, an import, is a
	// descriptor and a token.
	maxRequest = 256
	// maxReply bounds every other reply: a segment's or queue's
	// description, or an error's text.
	maxReply = 4 << 10
	// maxFDs bounds the descriptors a message carries: an import's
	// reply has the most.
	maxFDs = 4
	// MaxPing bounds a ping's payload, and so what a pinging peer makes
	// the owner read and send back.
	MaxPing = 4 << 10
)

// RequestLimit is the largest payload the owner reads for a request.
func RequestLimit(t Type) uint32 {
	if t == Ping {
		return MaxPing
	}
	return maxRequest
}

// ReplyLimit is the largest payload an importer reads for a reply of type t.
func ReplyLimit(t Type) uint32 {
	switch t {
	case List:
		return MaxPayload
	case Ping:
		return MaxPing
	}
	return maxReply
}

// Message is a request or a reply.
type Message struct {
	Type    Type
	Status  provider.Status
	Payload []byte
	FDs     []int
}

// Err is the error a failed reply reports, nil for a successful one.
func (m *Message) Err() error {
	if m.Status == provider.StatusSuccess {
		return nil
	}
	return provider.Errorf(m.Status, "peer: %s", m.Payload)
}

// CloseFDs closes descriptors that came with a message and were not used.
func (m *Message) CloseFDs() {
	for _, fd := range m.FDs {
		unix.Close(fd)
	}
	m.FDs = nil
}

// Write sends m on c, its descriptors with its first bytes.
func Write(c *net.UnixConn, m Message) error {
	b := make([]byte, HeaderSize, HeaderSize+len(m.Payload))
	b[0] = byte(m.Type)
	binary.LittleEndian.PutUint32(b[4:], uint32(m.Status))
	binary.LittleEndian.PutUint32(b[8:], uint32(len(m.Payload)))
	b = append(b, m.Payload...)
	var oob []byte
	if len(m.FDs) > 0 {
		oob = unix.UnixRights(m.FDs...)
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

// Read reads one message whose payload is at most limit(its type)
// bytes. Once its first bytes are in, the rest must come within partial
// (0: no limit), so that a peer cannot hold a half-sent message, and the
// buffer for it, open for ever.
func Read(c *net.UnixConn, limit func(Type) uint32, partial time.Duration) (Message, error) {
	var hdr [HeaderSize]byte
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	n, oobn, _, _, err := c.ReadMsgUnix(hdr[:], oob)
	if err != nil {
		return Message{}, err
	}
	var m Message
	if oobn > 0 {
		m.FDs = parseRights(oob[:oobn])
	}
	if n == 0 {
		m.CloseFDs()
		return Message{}, io.EOF
	}
	if partial > 0 {
		if err := c.SetReadDeadline(time.Now().Add(partial)); err != nil {
			m.CloseFDs()
			return Message{}, err
		}
		defer c.SetReadDeadline(time.Time{})
	}
	if _, err := io.ReadFull(c, hdr[n:]); err != nil {
		m.CloseFDs()
		return Message{}, err
	}
	m.Type = Type(hdr[0])
	m.Status = provider.Status(int32(binary.LittleEndian.Uint32(hdr[4:])))
	size := binary.LittleEndian.Uint32(hdr[8:])
	if size > limit(m.Type) {
		m.CloseFDs()
		return Message{}, provider.Errorf(provider.ErrInvalid, "control message of type %d has %d bytes, more than its %d", m.Type, size, limit(m.Type))
	}
	if m.Payload, err = readPayload(c, int(size)); err != nil {
		m.CloseFDs()
		return Message{}, err
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

// parseRights returns the descriptors of the SCM_RIGHTS messages in oob,
// none when oob is malformed.
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

// Buf is a little-endian encoder and decoder for payloads. A decoder that
// runs past the end records it in Short, so callers check once.
type Buf struct {
	Bytes []byte // what was encoded, or what is left to decode
	Short bool   // a decoder ran past the end
}

// U32 appends v.
func (w *Buf) U32(v uint32) *Buf { w.Bytes = binary.LittleEndian.AppendUint32(w.Bytes, v); return w }

// U64 appends v.
func (w *Buf) U64(v uint64) *Buf { w.Bytes = binary.LittleEndian.AppendUint64(w.Bytes, v); return w }

// Take consumes the next n bytes; zeros, and Short set, when fewer are
// left.
func (w *Buf) Take(n int) []byte {
	if len(w.Bytes) < n {
		w.Short = true
		return make([]byte, n)
	}
	v := w.Bytes[:n]
	w.Bytes = w.Bytes[n:]
	return v
}

// GetU32 consumes a uint32.
func (w *Buf) GetU32() uint32 { return binary.LittleEndian.Uint32(w.Take(4)) }

// GetU64 consumes a uint64.
func (w *Buf) GetU64() uint64 { return binary.LittleEndian.Uint64(w.Take(8)) }

// SegReply describes segment memory: where the owner has it and how this
// process reaches it (a memfd of Size bytes, or process_vm_* into PID).
type SegReply struct {
	Handle, Gen uint32
	Caller      bool // caller memory: no memfd, reach it through PID
	PID         uint32
	VA, Len     uint64
	Size        uint64 // bytes to map from the memfd
	Access      provider.Access
}

// Encode is the payload that carries r.
func (r SegReply) Encode() []byte {
	var w Buf
	caller := uint32(0)
	if r.Caller {
		caller = 1
	}
	return w.U32(r.Handle).U32(r.Gen).U32(caller).U32(r.PID).U64(r.VA).U64(r.Len).U64(r.Size).U32(uint32(r.Access)).Bytes
}

// DecodeSegReply reads a SegReply from a payload; false when b is too
// short for one.
func DecodeSegReply(b []byte) (SegReply, bool) {
	w := Buf{Bytes: b}
	r := SegReply{Handle: w.GetU32(), Gen: w.GetU32(), Caller: w.GetU32() == 1, PID: w.GetU32(),
		VA: w.GetU64(), Len: w.GetU64(), Size: w.GetU64(), Access: provider.Access(w.GetU32())}
	return r, !w.Short
}

// JettyReply describes a receive queue and its JFC for a sender.
type JettyReply struct {
	ID, MaxSGE, Depth uint32
	SlotSize          uint64
	CRFlags           uint32
	JFCID, JFCDepth   uint32
	JFCSlotSize       uint64
	HasEventfd        uint32
	InboxCells        uint32 // 0: no inbox (its fd is then absent)
}

// Encode is the payload that carries r.
func (r JettyReply) Encode() []byte {
	var w Buf
	return w.U32(r.ID).U32(r.MaxSGE).U32(r.Depth).U64(r.SlotSize).U32(r.CRFlags).
		U32(r.JFCID).U32(r.JFCDepth).U64(r.JFCSlotSize).U32(r.HasEventfd).U32(r.InboxCells).Bytes
}

// DecodeJettyReply reads a JettyReply from a payload; false when b is too
// short for one.
func DecodeJettyReply(b []byte) (JettyReply, bool) {
	w := Buf{Bytes: b}
	r := JettyReply{ID: w.GetU32(), MaxSGE: w.GetU32(), Depth: w.GetU32(), SlotSize: w.GetU64(),
		CRFlags: w.GetU32(), JFCID: w.GetU32(), JFCDepth: w.GetU32(), JFCSlotSize: w.GetU64(), HasEventfd: w.GetU32(),
		InboxCells: w.GetU32()}
	return r, !w.Short
}

// ListStats, as the one byte of a List request's payload, asks for the
// context's counters in the reply too (ContextInfo.Stats and the queues'
// and JFCs' Stats); a List with no payload has none.
const ListStats byte = 1
