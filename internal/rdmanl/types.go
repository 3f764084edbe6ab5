package rdmanl

import "strconv"

// Device is an RDMA device as the kernel numbers it.
type Device struct {
	Index uint32
	Name  string
	// Protocol is the link protocol ("roce", "iw", "ib"), empty where the
	// kernel does not say.
	Protocol string
}

// Owner is who holds a resource: a process or, for the kernel's own
// objects, the kernel module or subsystem that Kernel names (PID 0).
type Owner struct {
	// PID is what the kernel reports, in the caller's PID namespace: the
	// ID of the thread that created the object, which is the process's
	// PID only for its main thread (a Go program makes its objects on
	// whichever thread runs the goroutine).
	PID uint32
	// Process is the PID of the process that thread belongs to, which the
	// Conn's listings read from /proc; 0 where the thread has exited or
	// /proc does not say.
	Process uint32
	Kernel  string
}

// QPType is a queue pair's transport as the kernel numbers it (enum
// ib_qp_type).
type QPType uint8

// The kernel's QP types.
const (
	QPTypeSMI          QPType = 0
	QPTypeGSI          QPType = 1
	QPTypeRC           QPType = 2
	QPTypeUC           QPType = 3
	QPTypeUD           QPType = 4
	QPTypeRawIPv6      QPType = 5
	QPTypeRawEthertype QPType = 6
	QPTypeRawPacket    QPType = 8
	QPTypeXRCIni       QPType = 9
	QPTypeXRCTgt       QPType = 10
	QPTypeDriver       QPType = 0xff
)

var qpTypeNames = map[QPType]string{
	QPTypeSMI: "SMI", QPTypeGSI: "GSI", QPTypeRC: "RC", QPTypeUC: "UC", QPTypeUD: "UD",
	QPTypeRawIPv6: "RAW_IPV6", QPTypeRawEthertype: "RAW_ETHERTYPE", QPTypeRawPacket: "RAW_PACKET",
	QPTypeXRCIni: "XRC_INI", QPTypeXRCTgt: "XRC_TGT", QPTypeDriver: "DRIVER",
}

// String is the verbs name of the type, or its number.
func (t QPType) String() string {
	if s, ok := qpTypeNames[t]; ok {
		return s
	}
	return "TYPE_" + strconv.Itoa(int(t))
}

// QPState is a queue pair's state (enum ib_qp_state).
type QPState uint8

// The kernel's QP states.
const (
	QPStateReset QPState = iota
	QPStateInit
	QPStateRTR
	QPStateRTS
	QPStateSQD
	QPStateSQE
	QPStateErr
)

var qpStateNames = [...]string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}

// String is the verbs name of the state, or its number.
func (s QPState) String() string {
	if int(s) < len(qpStateNames) {
		return qpStateNames[s]
	}
	return "STATE_" + strconv.Itoa(int(s))
}

// QP is a queue pair.
type QP struct {
	// Port is the port the QP is bound to; 0 before its first modify.
	Port uint32
	QPN  uint32
	// RemoteQPN is the connected peer's QP number (RC and UC only);
	// HasRemote says whether the kernel gave it.
	RemoteQPN uint32
	HasRemote bool
	Type      QPType
	State     QPState
	// PDN is the protection domain's number (0 for kernel QPs).
	PDN uint32
	Owner
}

// CQ is a completion queue.
type CQ struct {
	CQN uint32
	// CQE is the number of entries the CQ holds.
	CQE uint32
	// Users counts the QPs and SRQs that report to this CQ.
	Users uint64
	// Context is the verbs context's number (0 for kernel CQs).
	Context uint32
	Owner
}

// QPRange is the QP numbers First..Last (inclusive).
type QPRange struct{ First, Last uint32 }

// SRQ is a shared receive queue.
type SRQ struct {
	SRQN uint32
	// Type is enum ib_srq_type: 0 basic, 1 XRC, 2 tag matching.
	Type uint8
	PDN  uint32
	// CQN is the CQ of an XRC or tag-matching SRQ (HasCQ).
	CQN   uint32
	HasCQ bool
	// QPs are the QPs that receive through this SRQ.
	QPs []QPRange
	Owner
}

// MR is a memory region.
type MR struct {
	MRN uint32
	// RKey and LKey are given only to a caller with CAP_NET_ADMIN
	// (HasKeys).
	RKey, LKey uint32
	HasKeys    bool
	Len        uint64
	PDN        uint32
	Owner
}
