package ib

import (
	"encoding/binary"

	"github.com/urma-go/sdk/provider"
)

// The connection protocol. Everything a peer asks of a context goes in the
// private data of an rdma_cm connect request to the context's listener
// (its port is the context's UASID): import a segment, import a JFR or
// Jetty, open an RM connection to one, bind an RC Jetty, or introduce a UM
// sender's UD QP to a UM JFR or Jetty. The answer comes back in the private
// data of the reject (imports, introductions, refusals) or of the accept
// (connections). InfiniBand's CM allows 56 bytes in a request and 148 in
// a reject, so a request takes 56 and a reply 40.

// Operations of a request.
const (
	opImportSegment uint8 = 1
	opImportJetty   uint8 = 2
	opConnect       uint8 = 3 // RM: a QP from a JFS or Jetty to a JFR or Jetty
	opBind          uint8 = 4 // RC: a Jetty to a Jetty, one to one
	// opDatagram introduces a UM sender's UD QP to a UM JFR or Jetty, which
	// learns whom its datagrams come from and answers with its own UD QP.
	opDatagram uint8 = 5
	// opPing asks for an echo: the request's target and its va and len
	// (pingEcho bytes of payload) come back as the reply's rkey and gid.
	opPing uint8 = 6
	// opResolvePort asks the listener at a urmanet port for the Jetty
	// published there (ports.go): target is the port.
	opResolvePort uint8 = 7
)

const (
	protoVersion = 2
	requestSize  = 56
	replySize    = 40
)

var protoMagic = [2]byte{'U', 'B'}

// request is a decoded connect request.
type request struct {
	op uint8
	// target names what the request is for: a JFR or Jetty id, or a
	// segment's token id.
	target uint32
	token  uint32
	kind   provider.JettyKind
	mode   provider.TransportMode
	access provider.Access
	policy provider.TokenPolicy
	// srcEID, srcUASID and srcID name the initiator's context and queue,
	// so that receive records carry the sender even when the connection
	// leaves from another address of the device (another address family).
	// srcEID travels only in connect, bind and datagram requests, in the
	// place of va and len, which only segment imports use.
	srcEID   provider.EID
	srcUASID uint32
	srcID    uint32
	// rnrTimer is the IB encoding of the pause the initiator wants between
	// RNR retries; the responder's QP announces it.
	rnrTimer uint8
	// rnrRetry is how often the initiator retries an RNR NAK, 7 forever.
	rnrRetry uint8
	// srcQPN and srcIID are a UM sender's UD QP number and the low 64 bits
	// of the GID its datagrams leave from: what a UD receive reports of
	// its sender.
	srcQPN  uint32
	srcIID  uint64
	va, len uint64
}

// carriesSource reports whether op sends srcEID instead of va and len.
func carriesSource(op uint8) bool { return op == opConnect || op == opBind || op == opDatagram }

func (r *request) marshal() []byte {
	b := make([]byte, requestSize)
	copy(b, protoMagic[:])
	b[2], b[3] = protoVersion, r.op
	binary.BigEndian.PutUint32(b[4:], r.target)
	binary.BigEndian.PutUint32(b[8:], r.token)
	b[12], b[13], b[14], b[15] = byte(r.kind), byte(r.mode), byte(r.access), byte(r.policy)
	binary.BigEndian.PutUint32(b[16:], r.srcUASID)
	binary.BigEndian.PutUint32(b[20:], r.srcID)
	b[24], b[25] = r.rnrTimer, r.rnrRetry
	binary.BigEndian.PutUint32(b[28:], r.srcQPN)
	binary.BigEndian.PutUint64(b[48:], r.srcIID)
	if carriesSource(r.op) {
		copy(b[32:], r.srcEID[:])
	} else {
		binary.BigEndian.PutUint64(b[32:], r.va)
		binary.BigEndian.PutUint64(b[40:], r.len)
	}
	return b
}

// parseRequest decodes a request. Transports may pad private data with
// zeros, so longer input is accepted.
func parseRequest(b []byte) (request, error) {
	if len(b) < requestSize {
		return request{}, provider.Errorf(provider.ErrInvalid, "connect request: %d bytes of private data, want %d", len(b), requestSize)
	}
	if [2]byte(b[:2]) != protoMagic || b[2] != protoVersion {
		return request{}, provider.Errorf(provider.ErrInvalid, "connect request: not a urma-go request (magic %q, version %d)", b[:2], b[2])
	}
	r := request{
		op: b[3], target: binary.BigEndian.Uint32(b[4:]), token: binary.BigEndian.Uint32(b[8:]),
		kind: provider.JettyKind(b[12]), mode: provider.TransportMode(b[13]),
		access: provider.Access(b[14]), policy: provider.TokenPolicy(b[15]),
		srcUASID: binary.BigEndian.Uint32(b[16:]), srcID: binary.BigEndian.Uint32(b[20:]),
		rnrTimer: b[24], rnrRetry: b[25],
		srcQPN: binary.BigEndian.Uint32(b[28:]), srcIID: binary.BigEndian.Uint64(b[48:]),
	}
	if carriesSource(r.op) {
		r.srcEID = provider.EID(b[32:48])
	} else {
		r.va, r.len = binary.BigEndian.Uint64(b[32:]), binary.BigEndian.Uint64(b[40:])
	}
	if r.op < opImportSegment || r.op > opResolvePort {
		return request{}, provider.Errorf(provider.ErrInvalid, "connect request: unknown operation %d", r.op)
	}
	return r, nil
}

// Reply status codes: the sentinel a refusal maps to on the initiator.
const (
	replyOK uint8 = iota
	replyNotFound
	replyInvalid
	replyPermission
	replyExist
	replyBusy
	replyClosed
	replyBadState
	replyNotSupported
	replyFail
	// replyCollision refuses a Bind that crossed the target's own Bind to
	// the initiator: the target's connection is the one both keep.
	replyCollision
)

var replyErrors = []error{
	replyNotFound: provider.ErrNotFound, replyInvalid: provider.ErrInvalid,
	replyPermission: provider.ErrPermission, replyExist: provider.ErrExist,
	replyBusy: provider.ErrBusy, replyClosed: provider.ErrClosed,
	replyBadState: provider.ErrBadState, replyNotSupported: provider.ErrNotSupported,
	replyFail: provider.ErrFail, replyCollision: provider.ErrAgain,
}

func replyCode(err error) uint8 {
	for code, e := range replyErrors {
		if e != nil && provider.StatusOf(err) == provider.StatusOf(e) {
			return uint8(code)
		}
	}
	return replyFail
}

// reply is a decoded answer.
type reply struct {
	status uint8
	// rkey of an imported segment; qpn and qkey of a UM JFR's UD QP.
	rkey, qpn, qkey uint32
	// id of the queue that accepted a connection, for receive records.
	id uint32
	// gid is where a UM JFR's datagrams go: the GID of the EID it was
	// reached on (on InfiniBand, not the EID itself).
	gid [16]byte

	// policy and members answer the import of a jetty group: byte 20 is
	// the policy, byte 21 the member count, and the member ids follow
	// the 40 bytes of every reply.
	policy  provider.GroupPolicy
	members []uint32
}

// rejectDataSize is the private data a reject carries on InfiniBand and
// RoCE (IB_CM_REJ_PRIVATE_DATA_SIZE), where import answers travel.
const rejectDataSize = 148

// maxGroupMembers is the most member ids an import answer holds: the
// device's max_jetty_in_jetty_grp.
const maxGroupMembers = (rejectDataSize - replySize) / 4

func (r *reply) marshal() []byte {
	b := make([]byte, replySize)
	copy(b, protoMagic[:])
	b[2], b[3] = protoVersion, r.status
	binary.BigEndian.PutUint32(b[4:], r.rkey)
	binary.BigEndian.PutUint32(b[8:], r.qpn)
	binary.BigEndian.PutUint32(b[12:], r.qkey)
	binary.BigEndian.PutUint32(b[16:], r.id)
	copy(b[24:], r.gid[:])
	if len(r.members) > 0 {
		b[20], b[21] = byte(r.policy), byte(len(r.members))
		for _, id := range r.members {
			b = binary.BigEndian.AppendUint32(b, id)
		}
	}
	return b
}

func parseReply(b []byte) (reply, error) {
	if len(b) < replySize || [2]byte(b[:2]) != protoMagic || b[2] != protoVersion {
		return reply{}, provider.Errorf(provider.ErrInvalid, "reply of %d bytes is not a urma-go reply", len(b))
	}
	r := reply{status: b[3], rkey: binary.BigEndian.Uint32(b[4:]), qpn: binary.BigEndian.Uint32(b[8:]),
		qkey: binary.BigEndian.Uint32(b[12:]), id: binary.BigEndian.Uint32(b[16:]), gid: [16]byte(b[24:40])}
	if int(r.status) >= len(replyErrors) {
		return reply{}, provider.Errorf(provider.ErrInvalid, "reply status %d unknown", r.status)
	}
	if n := int(b[21]); n > 0 {
		r.policy = provider.GroupPolicy(b[20])
		if n > maxGroupMembers || len(b) < replySize+4*n || r.policy > provider.GroupPolicyHashHint {
			return reply{}, provider.Errorf(provider.ErrInvalid, "reply names %d group members in %d bytes", n, len(b))
		}
		r.members = make([]uint32, n)
		for i := range r.members {
			r.members[i] = binary.BigEndian.Uint32(b[replySize+4*i:])
		}
	}
	return r, nil
}

// err returns nil for replyOK or the sentinel with the peer's refusal.
func (r reply) err(what string) error {
	if r.status == replyOK {
		return nil
	}
	return provider.Errorf(replyErrors[r.status], "%s refused by the peer", what)
}

// pingEcho is the payload a ping carries: the 16 bytes of a request's va
// and len, which come back in a reply's gid.
const pingEcho = 16

// pingRequest is a ping carrying nonce and payload (at most pingEcho bytes).
func pingRequest(nonce, srcUASID uint32, payload []byte) request {
	var b [pingEcho]byte
	copy(b[:], payload)
	return request{op: opPing, target: nonce, srcUASID: srcUASID,
		va: binary.BigEndian.Uint64(b[:8]), len: binary.BigEndian.Uint64(b[8:])}
}

// pingReply is the answer to ping request r: its nonce and payload back.
func pingReply(r request) reply {
	rep := reply{status: replyOK, rkey: r.target}
	binary.BigEndian.PutUint64(rep.gid[:8], r.va)
	binary.BigEndian.PutUint64(rep.gid[8:], r.len)
	return rep
}

// echoes reports whether rep answers the ping with nonce and payload.
func (r reply) echoes(nonce uint32, payload []byte) bool {
	var b [pingEcho]byte
	copy(b[:], payload)
	return r.status == replyOK && r.rkey == nonce && r.gid == b
}

// PingPort is the rdma_cm port at which urma.Context.ListenPing (urmactl
// ping -l) answers pings to an EID alone: urma.PingOptions with UASID 0.
const PingPort = 18519
