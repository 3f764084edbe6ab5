package rdmanl

// Numbers of the kernel's RDMA netlink ABI (include/uapi/rdma/rdma_netlink.h).

// nldevClient is RDMA_NL_NLDEV; a message type is client<<10 | command.
const nldevClient = 5

// msgType is RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd).
func msgType(cmd uint16) uint16 { return nldevClient<<10 | cmd }

// RDMA_NLDEV_CMD_* used here.
const (
	cmdGet      = 1
	cmdResQPGet = 10
	cmdResCQGet = 12
	cmdResMRGet = 13
	cmdResSRQ   = 23
)

// RDMA_NLDEV_ATTR_* used here. 0 is also the padding attribute of 64-bit
// values.
const (
	attrPad          = 0
	attrDevIndex     = 1  // u32
	attrDevName      = 2  // string
	attrPortIndex    = 3  // u32
	attrNodeType     = 14 // u8
	attrResQP        = 19 // nested
	attrResQPEntry   = 20 // nested
	attrLQPN         = 21 // u32
	attrRQPN         = 22 // u32
	attrRQPSN        = 23 // u32
	attrSQPSN        = 24 // u32
	attrPathMig      = 25 // u8
	attrResType      = 26 // u8
	attrResState     = 27 // u8
	attrResPID       = 28 // u32
	attrKernName     = 29 // string
	attrResCQ        = 35 // nested
	attrResCQEntry   = 36 // nested
	attrCQE          = 37 // u32
	attrUseCnt       = 38 // u64
	attrPollCtx      = 39 // u8
	attrResMR        = 40 // nested
	attrResMREntry   = 41 // nested
	attrRKey         = 42 // u32
	attrLKey         = 43 // u32
	attrIOVA         = 44 // u64
	attrMRLen        = 45 // u64
	attrNdevName     = 51 // string
	attrPDN          = 60 // u32
	attrCQN          = 61 // u32
	attrMRN          = 62 // u32
	attrCtxN         = 64 // u32
	attrDevProtocol  = 67 // string
	attrResSRQ       = 88 // nested
	attrResSRQEntry  = 89 // nested
	attrSRQN         = 90 // u32
	attrMinRange     = 91 // u32
	attrMaxRange     = 92 // u32
	attrResDim       = 84 // u8
	attrTypeMaskBits = 0x3fff
)
