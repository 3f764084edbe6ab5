package remote

import (
	"context"
	"time"

	"github.com/urma-go/sdk/provider"
)

// The protocol is a gob stream in each direction over one unix socket. A
// request is a header then its arguments; a reply is a header carrying the
// request's id and the error status, then the reply value, which is sent
// even with an error because Post, Poll, Wait and Flush return a count
// alongside it.

// op names a request.
type op uint16

const (
	opPing op = iota + 1
	opDevice
	opOpen
	opCallerMem
	opCancel
	opAllocTokenID
	opFreeTokenID
	opAllocSegment
	opRegisterSegment
	opImportSegment
	opNewJFCE
	opNewJFC
	opNewJFS
	opNewJFR
	opNewJetty
	opImport
	opAsyncEvent
	opAckAsyncEvent
	opClose
	opWait
	opPoll
	opRearm
	opAck
	opModifyJFC
	opPost
	opFlush
	opAdvise
	opUnadvise
	opQuery
	opModifyState
	opPostRecv
	opBind
	opUnbind
	// Queue knobs (knobs.go).
	opSetRxThreshold

	// Counters (stats.go).
	opQueueStats
	opContextStats
	// A context's urma ping (provider.Pinger), not the peer's liveness.
	opContextPing
	opMaxPing
	// Jetty groups (groups.go).
	opNewJettyGroup
	opGroupMembers
	opImportJettyGroup
)

type header struct {
	ID     uint64
	Op     op
	Status int32
	Msg    string
}

// rpc ties an op to its argument and reply types, so that client and server
// cannot disagree about them.
type rpc[A, R any] struct{ op op }

var (
	rpcPing            = rpc[empty, pingReply]{opPing}
	rpcDevice          = rpc[deviceArgs, deviceReply]{opDevice}
	rpcOpen            = rpc[openArgs, openReply]{opOpen}
	rpcCallerMem       = rpc[callerMemArgs, callerMemReply]{opCallerMem}
	rpcCancel          = rpc[cancelArgs, empty]{opCancel}
	rpcAllocTokenID    = rpc[hArgs, tokenReply]{opAllocTokenID}
	rpcFreeTokenID     = rpc[tokenArgs, empty]{opFreeTokenID}
	rpcAllocSegment    = rpc[allocSegArgs, segReply]{opAllocSegment}
	rpcRegisterSegment = rpc[regSegArgs, segReply]{opRegisterSegment}
	rpcImportSegment   = rpc[importSegArgs, targetReply]{opImportSegment}
	rpcNewJFCE         = rpc[hArgs, newReply]{opNewJFCE}
	rpcNewJFC          = rpc[jfcArgs, jfcReply]{opNewJFC}
	rpcNewJFS          = rpc[jfsArgs, newReply]{opNewJFS}
	rpcNewJFR          = rpc[jfrArgs, remoteReply]{opNewJFR}
	rpcNewJetty        = rpc[jettyArgs, remoteReply]{opNewJetty}
	rpcImport          = rpc[importArgs, remoteReply]{opImport}
	rpcAsyncEvent      = rpc[asyncEventArgs, event]{opAsyncEvent}
	rpcAckAsyncEvent   = rpc[ackArgs, empty]{opAckAsyncEvent}
	rpcClose           = rpc[hArgs, empty]{opClose}
	rpcWait            = rpc[waitArgs, waitReply]{opWait}
	rpcPoll            = rpc[countArgs, crsReply]{opPoll}
	rpcRearm           = rpc[rearmArgs, empty]{opRearm}
	rpcAck             = rpc[countArgs, empty]{opAck}
	rpcModifyJFC       = rpc[modifyJFCArgs, empty]{opModifyJFC}
	rpcPost            = rpc[postArgs, countReply]{opPost}
	rpcFlush           = rpc[countArgs, crsReply]{opFlush}
	rpcAdvise          = rpc[remoteArgs, empty]{opAdvise}
	rpcUnadvise        = rpc[remoteArgs, empty]{opUnadvise}
	rpcQuery           = rpc[hArgs, queryReply]{opQuery}
	rpcModifyState     = rpc[stateArgs, empty]{opModifyState}
	rpcPostRecv        = rpc[postRecvArgs, countReply]{opPostRecv}
	rpcBind            = rpc[remoteArgs, empty]{opBind}
	rpcUnbind          = rpc[hArgs, empty]{opUnbind}
	// A context's urma ping.
	rpcContextPing = rpc[contextPingArgs, empty]{opContextPing}
	rpcMaxPing     = rpc[hArgs, countReply]{opMaxPing}
)

// Handles name the peer's objects. Zero stands for a nil interface, and
// foreignHandle for an object that is not one of this peer's: the peer puts
// a stand-in carrying its descriptor in its place, so that its provider
// rejects it exactly as it would reject any object of another provider.
const (
	noHandle      uint64 = 0
	foreignHandle uint64 = ^uint64(0)
)

// gob refuses struct types without exported fields, hence the dummy field.
type empty struct{ Unused bool }

type hArgs struct{ H uint64 }

type newReply struct{ H uint64 }

type pingReply struct{ Pid int }

type deviceArgs struct{ Name string }

type deviceReply struct {
	Attr provider.DeviceAttr
	EIDs []provider.EID
}

type openArgs struct {
	Device   string
	EIDIndex int
}

type openReply struct {
	H     uint64
	EID   provider.EID
	UASID uint32
}

type callerMemArgs struct{ N int }

// fileID identifies a file across processes, so that the side that opens
// /proc/<pid>/fd/<fd> can check it got the file it was told about.
type fileID struct {
	FD  int
	Dev uint64
	Ino uint64
}

type callerMemReply struct {
	ID   uint64
	File fileID
}

type cancelArgs struct{ ID uint64 }

type tokenArgs struct {
	H  uint64
	ID uint32
}

type tokenReply struct{ ID uint32 }

type allocSegArgs struct {
	H    uint64
	Size uint64
	Cfg  provider.SegmentConfig
}

type regSegArgs struct {
	H        uint64
	Mem      uint64
	Off, Len int
	Cfg      provider.SegmentConfig
}

type segReply struct {
	H      uint64
	Desc   segDesc
	Shared bool
	File   fileID
	Off    int64
}

type importSegArgs struct {
	H     uint64
	Desc  segDesc
	Token uint32
}

type targetReply struct {
	H    uint64
	Desc segDesc
}

type jfcArgs struct {
	H         uint64
	Depth     int
	JFCE      uint64
	ModCount  int
	ModPeriod time.Duration
	LockFree  bool
	Owner     uint64
}

type jfcReply struct {
	H     uint64
	Depth int
}

type jfsConfig struct {
	Depth      int
	Mode       provider.TransportMode
	MaxSGE     int
	MaxInline  int
	RNRRetry   int
	RNRTimeout time.Duration
	JFC        uint64
	Owner      uint64
	Knobs      sendKnobs
}

type jfrConfig struct {
	Depth       int
	Mode        provider.TransportMode
	MaxSGE      int
	TokenPolicy provider.TokenPolicy
	Token       uint32
	JFC         uint64
	Owner       uint64
	RxThreshold int
}

type jfsArgs struct {
	H   uint64
	Cfg jfsConfig
}

type jfrArgs struct {
	H   uint64
	Cfg jfrConfig
}

type jettyArgs struct {
	H         uint64
	Send      jfsConfig
	SharedJFR uint64
	Recv      jfrConfig
	Owner     uint64
	Group     uint64
}

type importArgs struct {
	H     uint64
	Desc  jettyDesc
	Token uint32
}

type remoteReply struct {
	H    uint64
	Desc jettyDesc
}

type asyncEventArgs struct {
	H uint64
	// Timeout is what was left of the caller's deadline; negative means
	// none. Canceled says the caller's context was already canceled.
	Timeout  time.Duration
	Canceled bool
	// CancelID names the call for a later opCancel.
	CancelID uint64

	// The peer's context for the call, made before the call is started so
	// that a cancel arriving right behind it finds it (see prepare).
	ctx    context.Context
	cancel context.CancelFunc
}

type event struct {
	Type   provider.EventType
	Owner  uint64
	Port   int
	Handle uint64
}

type ackArgs struct {
	H  uint64
	Ev event
}

type waitArgs struct {
	H       uint64
	Timeout time.Duration
	N       int
}

type waitReply struct {
	N      int
	Owners []uint64
}

type countArgs struct {
	H uint64
	N int
}

type countReply struct{ N int }

type crsReply struct {
	N   int
	CRs []provider.CR
}

type rearmArgs struct {
	H             uint64
	SolicitedOnly bool
}

type modifyJFCArgs struct {
	H      uint64
	Count  int
	Period time.Duration
}

type stateArgs struct {
	H     uint64
	State provider.State
}

type queryReply struct{ Attr provider.QueueAttr }

// remoteRef names a provider.Remote: a handle, or a foreign one's descriptor.
type remoteRef struct {
	H       uint64
	Foreign jettyDesc
}

type remoteArgs struct {
	H uint64
	R remoteRef
}

type sge struct {
	Seg     uint64
	Foreign segDesc
	Addr    uint64
	Len     uint32
}

type wr struct {
	Opcode  provider.Opcode
	Flags   provider.WRFlags
	UserCtx uint64
	Target  remoteRef
	Local   []sge
	Remote  sge
	Inline  []byte
	Imm     uint64
	Compare uint64
	Operand uint64
	// Notify is WRITE_NOTIFY's notify target; Invalidate names by its
	// Seg the segment a SEND_INVALIDATE invalidates (noHandle: none).
	Notify     sge
	Invalidate sge
}

type recvWR struct {
	UserCtx uint64
	Local   []sge
}

type postArgs struct {
	H   uint64
	WRs []wr
}

type postRecvArgs struct {
	H   uint64
	WRs []recvWR
}

// segDesc and jettyDesc are the descriptors without their MarshalBinary
// methods, which refuse invalid descriptors: the proxy must carry whatever
// the caller passed and let the peer's provider judge it.
type (
	segDesc   provider.SegmentDesc
	jettyDesc provider.JettyDesc
)

// maxBatch bounds the slices a request makes the peer allocate (records to
// poll, owners to wait for), so a bogus count cannot exhaust its memory.
const maxBatch = 1 << 20

func clampBatch(n int) int { return max(0, min(n, maxBatch)) }

// encodeErr is what a reply header carries for err.
func encodeErr(err error) (int32, string) {
	if err == nil {
		return 0, ""
	}
	return int32(provider.StatusOf(err)), err.Error()
}

// decodeErr rebuilds an error that reads as the peer's did and unwraps to
// the status it carried, so errors.Is and errors.As work as in the peer.
func decodeErr(status int32, msg string) error {
	st := provider.Status(status)
	if st == provider.StatusSuccess {
		return nil
	}
	if msg == st.Error() {
		return st
	}
	return &peerError{msg: msg, status: st}
}

// peerError is an error of the peer's provider, by its text and status.
type peerError struct {
	msg    string
	status provider.Status
}

func (e *peerError) Error() string { return e.msg }
func (e *peerError) Unwrap() error { return e.status }
