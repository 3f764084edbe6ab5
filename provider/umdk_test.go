package provider_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urma-go/sdk/provider"
)

// umdkValue is one constant of openEuler UMDK's urma_opcode.h or
// urma_types.h, by its C name, with the value the header gives it and the
// value of the constant that stands for it here.
type umdkValue struct {
	name      string
	umdk, got int64
}

// TestUMDKValues pins every enum and flag that UMDK defines to UMDK's
// value, so that a record, a flag word or a descriptor means the same
// here as in C.
func TestUMDKValues(t *testing.T) {
	table := []umdkValue{
		{"URMA_OPC_WRITE", 0x00, int64(provider.OpWrite)},
		{"URMA_OPC_WRITE_IMM", 0x01, int64(provider.OpWriteImm)},
		{"URMA_OPC_WRITE_NOTIFY", 0x02, int64(provider.OpWriteNotify)},
		{"URMA_OPC_READ", 0x10, int64(provider.OpRead)},
		{"URMA_OPC_CAS", 0x20, int64(provider.OpCAS)},
		{"URMA_OPC_SWAP", 0x21, int64(provider.OpSwap)},
		{"URMA_OPC_FADD", 0x22, int64(provider.OpFAdd)},
		{"URMA_OPC_FSUB", 0x23, int64(provider.OpFSub)},
		{"URMA_OPC_FAND", 0x24, int64(provider.OpFAnd)},
		{"URMA_OPC_FOR", 0x25, int64(provider.OpFOr)},
		{"URMA_OPC_FXOR", 0x26, int64(provider.OpFXor)},
		{"URMA_OPC_SEND", 0x40, int64(provider.OpSend)},
		{"URMA_OPC_SEND_IMM", 0x41, int64(provider.OpSendImm)},
		{"URMA_OPC_SEND_INVALIDATE", 0x42, int64(provider.OpSendInvalidate)},
		{"URMA_OPC_NOP", 0x51, int64(provider.OpNOP)},
		{"URMA_OPC_WRITE_ATOMIC", 0x60, int64(provider.OpWriteAtomic)},
		{"URMA_OPC_FLUSH_DMA", 0x80, int64(provider.OpFlushDMA)},

		{"URMA_CR_SUCCESS", 0, int64(provider.CRSuccess)},
		{"URMA_CR_UNSUPPORTED_OPCODE_ERR", 1, int64(provider.CRUnsupportedOpcodeErr)},
		{"URMA_CR_LOC_LEN_ERR", 2, int64(provider.CRLocLenErr)},
		{"URMA_CR_LOC_OPERATION_ERR", 3, int64(provider.CRLocOperationErr)},
		{"URMA_CR_LOC_ACCESS_ERR", 4, int64(provider.CRLocAccessErr)},
		{"URMA_CR_REM_RESP_LEN_ERR", 5, int64(provider.CRRemRespLenErr)},
		{"URMA_CR_REM_UNSUPPORTED_REQ_ERR", 6, int64(provider.CRRemUnsupportedReqErr)},
		{"URMA_CR_REM_OPERATION_ERR", 7, int64(provider.CRRemOperationErr)},
		{"URMA_CR_REM_ACCESS_ABORT_ERR", 8, int64(provider.CRRemAccessAbortErr)},
		{"URMA_CR_ACK_TIMEOUT_ERR", 9, int64(provider.CRAckTimeoutErr)},
		{"URMA_CR_RNR_RETRY_CNT_EXC_ERR", 10, int64(provider.CRRNRRetryCntExcErr)},
		{"URMA_CR_WR_FLUSH_ERR", 11, int64(provider.CRWRFlushErr)},
		{"URMA_CR_WR_SUSPEND_DONE", 12, int64(provider.CRWRSuspendDone)},
		{"URMA_CR_WR_FLUSH_ERR_DONE", 13, int64(provider.CRWRFlushErrDone)},
		{"URMA_CR_WR_UNHANDLED", 14, int64(provider.CRWRUnhandled)},
		{"URMA_CR_LOC_DATA_POISON", 15, int64(provider.CRLocDataPoison)},
		{"URMA_CR_REM_DATA_POISON", 16, int64(provider.CRRemDataPoison)},

		{"URMA_CR_OPC_SEND", 0, int64(provider.CROpSend)},
		{"URMA_CR_OPC_SEND_WITH_IMM", 1, int64(provider.CROpSendImm)},
		{"URMA_CR_OPC_SEND_WITH_INV", 2, int64(provider.CROpSendInvalidate)},
		{"URMA_CR_OPC_WRITE_WITH_IMM", 3, int64(provider.CROpWriteImm)},
		{"URMA_CR_OPC_FLUSH_WRITE", 4, int64(provider.CROpFlushWrite)},

		{"urma_cr_flag_t.s_r", 1 << 0, int64(provider.CRFlagRecv)},
		{"urma_cr_flag_t.jetty", 1 << 1, int64(provider.CRFlagJetty)},
		{"urma_cr_flag_t.suspend_done", 1 << 2, int64(provider.CRFlagSuspendDone)},
		{"urma_cr_flag_t.flush_err_done", 1 << 3, int64(provider.CRFlagFlushErrDone)},

		{"urma_jfs_wr_flag_t.place_order=URMA_RELAX_ORDER", 1, int64(provider.FlagPlaceOrderRelax)},
		{"urma_jfs_wr_flag_t.place_order=URMA_STRONG_ORDER", 2, int64(provider.FlagPlaceOrderStrong)},
		{"urma_jfs_wr_flag_t.comp_order", 1 << 2, int64(provider.FlagCompOrder)},
		{"urma_jfs_wr_flag_t.fence", 1 << 3, int64(provider.FlagFence)},
		{"urma_jfs_wr_flag_t.solicited_enable", 1 << 4, int64(provider.FlagSolicited)},
		{"urma_jfs_wr_flag_t.complete_enable", 1 << 5, int64(provider.FlagSignaled)},
		{"urma_jfs_wr_flag_t.inline_flag", 1 << 6, int64(provider.FlagInline)},

		{"URMA_EVENT_JFC_ERR", 0, int64(provider.EventJFCErr)},
		{"URMA_EVENT_JFS_ERR", 1, int64(provider.EventJFSErr)},
		{"URMA_EVENT_JFR_ERR", 2, int64(provider.EventJFRErr)},
		{"URMA_EVENT_JFR_LIMIT", 3, int64(provider.EventJFRLimit)},
		{"URMA_EVENT_JETTY_ERR", 4, int64(provider.EventJettyErr)},
		{"URMA_EVENT_JETTY_LIMIT", 5, int64(provider.EventJettyLimit)},
		{"URMA_EVENT_JETTY_GRP_ERR", 6, int64(provider.EventJettyGrpErr)},
		{"URMA_EVENT_PORT_ACTIVE", 7, int64(provider.EventPortActive)},
		{"URMA_EVENT_PORT_DOWN", 8, int64(provider.EventPortDown)},
		{"URMA_EVENT_DEV_FATAL", 9, int64(provider.EventDevFatal)},
		{"URMA_EVENT_EID_CHANGE", 10, int64(provider.EventEIDChange)},
		{"URMA_EVENT_ELR_ERR", 11, int64(provider.EventELRErr)},
		{"URMA_EVENT_ELR_DONE", 12, int64(provider.EventELRDone)},

		{"URMA_TM_RM", 0x1, int64(provider.RM)},
		{"URMA_TM_RC", 0x2, int64(provider.RC)},
		{"URMA_TM_UM", 0x4, int64(provider.UM)},

		{"URMA_ACCESS_LOCAL_ONLY", 0x1, int64(provider.AccessLocalOnly)},
		{"URMA_ACCESS_READ", 0x2, int64(provider.AccessRead)},
		{"URMA_ACCESS_WRITE", 0x4, int64(provider.AccessWrite)},
		{"URMA_ACCESS_ATOMIC", 0x8, int64(provider.AccessAtomic)},

		{"URMA_TOKEN_NONE", 0, int64(provider.TokenNone)},
		{"URMA_TOKEN_PLAIN_TEXT", 1, int64(provider.TokenPlainText)},
		{"URMA_TOKEN_SIGNED", 2, int64(provider.TokenSigned)},
		{"URMA_TOKEN_ALL_ENCRYPTED", 3, int64(provider.TokenAllEncrypted)},

		{"URMA_JETTY_STATE_RESET", 0, int64(provider.StateReset)},
		{"URMA_JETTY_STATE_READY", 1, int64(provider.StateReady)},
		{"URMA_JETTY_STATE_SUSPENDED", 2, int64(provider.StateSuspended)},
		{"URMA_JETTY_STATE_ERROR", 3, int64(provider.StateError)},

		{"URMA_JFR", 0, int64(provider.KindJFR)},
		{"URMA_JETTY", 1, int64(provider.KindJetty)},
		{"URMA_JETTY_GROUP", 2, int64(provider.KindJettyGroup)},

		{"URMA_PORT_NOP", 0, int64(provider.PortNoState)},
		{"URMA_PORT_DOWN", 1, int64(provider.PortDown)},
		{"URMA_PORT_INIT", 2, int64(provider.PortInit)},
		{"URMA_PORT_ARMED", 3, int64(provider.PortArmed)},
		{"URMA_PORT_ACTIVE", 4, int64(provider.PortActive)},
		{"URMA_PORT_ACTIVE_DEFER", 5, int64(provider.PortActiveDefer)},

		{"urma_atomic_feature_t.cas", 1 << 0, int64(provider.AtomicOpsOf(provider.OpCAS))},
		{"urma_atomic_feature_t.swap", 1 << 1, int64(provider.AtomicOpsOf(provider.OpSwap))},
		{"urma_atomic_feature_t.fetch_and_add", 1 << 2, int64(provider.AtomicOpsOf(provider.OpFAdd))},
		{"urma_atomic_feature_t.fetch_and_sub", 1 << 3, int64(provider.AtomicOpsOf(provider.OpFSub))},
		{"urma_atomic_feature_t.fetch_and_and", 1 << 4, int64(provider.AtomicOpsOf(provider.OpFAnd))},
		{"urma_atomic_feature_t.fetch_and_or", 1 << 5, int64(provider.AtomicOpsOf(provider.OpFOr))},
		{"urma_atomic_feature_t.fetch_and_xor", 1 << 6, int64(provider.AtomicOpsOf(provider.OpFXor))},

		{"URMA_TRANSPORT_INVALID", -1, int64(provider.TransportInvalid)},
		{"URMA_TRANSPORT_UB", 0, int64(provider.TransportUB)},

		{"URMA_VLOG_LEVEL_EMERG", 0, int64(provider.LogEmerg)},
		{"URMA_VLOG_LEVEL_ALERT", 1, int64(provider.LogAlert)},
		{"URMA_VLOG_LEVEL_CRIT", 2, int64(provider.LogCrit)},
		{"URMA_VLOG_LEVEL_ERR", 3, int64(provider.LogError)},
		{"URMA_VLOG_LEVEL_WARNING", 4, int64(provider.LogWarning)},
		{"URMA_VLOG_LEVEL_NOTICE", 5, int64(provider.LogNotice)},
		{"URMA_VLOG_LEVEL_INFO", 6, int64(provider.LogInfo)},
		{"URMA_VLOG_LEVEL_DEBUG", 7, int64(provider.LogDebug)},

		{"URMA_SUCCESS", 0, int64(provider.StatusSuccess)},
		{"URMA_FAIL", 0x1000, int64(provider.StatusFail)},

		// Jetty groups.
		{"URMA_JETTY_GRP_POLICY_RR", 0, int64(provider.GroupPolicyRR)},
		{"URMA_JETTY_GRP_POLICY_HASH_HINT", 1, int64(provider.GroupPolicyHashHint)},
		{"URMA_MAX_JETTY_IN_JETTY_GRP", 32, int64(provider.MaxJettiesInGroup)},
	}
	for _, v := range table {
		assert.Equal(t, v.umdk, v.got, v.name)
	}
}

// TestExtensionsOutsideUMDK checks that the values this SDK adds cannot be
// mistaken for a UMDK value.
func TestExtensionsOutsideUMDK(t *testing.T) {
	assert.Greater(t, int(provider.CRSignatureErr), int(provider.CRRemDataPoison), "CR status")
	for _, f := range []provider.CRFlags{provider.CRFlagImm, provider.CRFlagSolicited} {
		assert.GreaterOrEqual(t, uint16(f), uint16(1<<8), "CR flag %v: urma_cr_flag_t is eight bits", f)
	}
	for _, tr := range []provider.TransportType{provider.TransportLoopback, provider.TransportIB, provider.TransportRoCE, provider.TransportIWARP} {
		assert.GreaterOrEqual(t, int(tr), 0x100, "transport %v", tr)
	}
	assert.Zero(t, provider.WRFlagsKnown&^0x7f, "WR flags beyond urma_jfs_wr_flag_t's seven defined bits")
}
