package provider_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/urma-go/sdk/provider"
)

func TestOpcodeString(t *testing.T) {
	for op, want := range map[provider.Opcode]string{
		provider.OpWrite: "WRITE", provider.OpWriteImm: "WRITE_IMM", provider.OpWriteNotify: "WRITE_NOTIFY",
		provider.OpRead: "READ", provider.OpCAS: "CAS", provider.OpSwap: "SWAP", provider.OpFAdd: "FADD",
		provider.OpFSub: "FSUB", provider.OpFAnd: "FAND", provider.OpFOr: "FOR", provider.OpFXor: "FXOR",
		provider.OpSend: "SEND", provider.OpSendImm: "SEND_IMM", provider.OpSendInvalidate: "SEND_INVALIDATE",
		provider.OpNOP: "NOP", provider.OpWriteAtomic: "WRITE_ATOMIC", provider.OpFlushDMA: "FLUSH_DMA",
		provider.Opcode(0x99): "Opcode(0x99)",
	} {
		assert.Equal(t, want, op.String())
	}
	// urma_opcode_t values.
	assert.Equal(t, []provider.Opcode{0x00, 0x01, 0x02, 0x10, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x40, 0x41, 0x42, 0x51, 0x60, 0x80},
		[]provider.Opcode{provider.OpWrite, provider.OpWriteImm, provider.OpWriteNotify, provider.OpRead, provider.OpCAS,
			provider.OpSwap, provider.OpFAdd, provider.OpFSub, provider.OpFAnd, provider.OpFOr, provider.OpFXor,
			provider.OpSend, provider.OpSendImm, provider.OpSendInvalidate, provider.OpNOP, provider.OpWriteAtomic,
			provider.OpFlushDMA})
}

func TestOpcodeClasses(t *testing.T) {
	atomics := map[provider.Opcode]bool{provider.OpCAS: true, provider.OpSwap: true, provider.OpFAdd: true,
		provider.OpFSub: true, provider.OpFAnd: true, provider.OpFOr: true, provider.OpFXor: true}
	sends := map[provider.Opcode]bool{provider.OpSend: true, provider.OpSendImm: true, provider.OpSendInvalidate: true}
	oneSided := map[provider.Opcode]bool{provider.OpWrite: true, provider.OpWriteImm: true, provider.OpWriteNotify: true,
		provider.OpRead: true, provider.OpWriteAtomic: true}
	for op := range atomics {
		oneSided[op] = true
	}
	for i := 0; i < 256; i++ {
		op := provider.Opcode(i)
		assert.Equal(t, atomics[op], op.IsAtomic(), "%v", op)
		assert.Equal(t, sends[op], op.IsSend(), "%v", op)
		assert.Equal(t, oneSided[op], op.IsOneSided(), "%v", op)
	}
}

func TestCRStatusString(t *testing.T) {
	want := []string{"SUCCESS", "UNSUPPORTED_OPCODE_ERR", "LOC_LEN_ERR", "LOC_OPERATION_ERR", "LOC_ACCESS_ERR",
		"REM_RESP_LEN_ERR", "REM_UNSUPPORTED_REQ_ERR", "REM_OPERATION_ERR", "REM_ACCESS_ABORT_ERR",
		"ACK_TIMEOUT_ERR", "RNR_RETRY_CNT_EXC_ERR", "WR_FLUSH_ERR", "WR_SUSPEND_DONE", "WR_FLUSH_ERR_DONE",
		"WR_UNHANDLED", "LOC_DATA_POISON", "REM_DATA_POISON"}
	consts := []provider.CRStatus{provider.CRSuccess, provider.CRUnsupportedOpcodeErr, provider.CRLocLenErr,
		provider.CRLocOperationErr, provider.CRLocAccessErr, provider.CRRemRespLenErr, provider.CRRemUnsupportedReqErr,
		provider.CRRemOperationErr, provider.CRRemAccessAbortErr, provider.CRAckTimeoutErr, provider.CRRNRRetryCntExcErr,
		provider.CRWRFlushErr, provider.CRWRSuspendDone, provider.CRWRFlushErrDone, provider.CRWRUnhandled,
		provider.CRLocDataPoison, provider.CRRemDataPoison}
	for i, s := range consts {
		assert.Equal(t, provider.CRStatus(i), s, "urma_cr_status_t value of %s", want[i])
		assert.Equal(t, want[i], s.String())
	}
	assert.Equal(t, "CRStatus(17)", provider.CRStatus(17).String())
	assert.Equal(t, "SIGNATURE_ERR", provider.CRSignatureErr.String())
}

func TestEventTypeString(t *testing.T) {
	want := []string{"JFC_ERR", "JFS_ERR", "JFR_ERR", "JFR_LIMIT", "JETTY_ERR", "JETTY_LIMIT", "JETTY_GRP_ERR",
		"PORT_ACTIVE", "PORT_DOWN", "DEV_FATAL", "EID_CHANGE", "ELR_ERR", "ELR_DONE"}
	consts := []provider.EventType{provider.EventJFCErr, provider.EventJFSErr, provider.EventJFRErr,
		provider.EventJFRLimit, provider.EventJettyErr, provider.EventJettyLimit, provider.EventJettyGrpErr,
		provider.EventPortActive, provider.EventPortDown, provider.EventDevFatal, provider.EventEIDChange,
		provider.EventELRErr, provider.EventELRDone}
	for i, e := range consts {
		assert.Equal(t, provider.EventType(i), e)
		assert.Equal(t, want[i], e.String())
	}
	assert.Equal(t, "EventType(13)", provider.EventType(13).String())
}

func TestSmallEnumStrings(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		provider.RM: "RM", provider.RC: "RC", provider.UM: "UM", provider.TransportMode(3): "TransportMode(0x3)",
		provider.TokenNone: "NONE", provider.TokenPlainText: "PLAIN_TEXT", provider.TokenSigned: "SIGNED",
		provider.TokenAllEncrypted: "ALL_ENCRYPTED", provider.TokenPolicy(4): "TokenPolicy(4)",
		provider.StateReset: "RESET", provider.StateReady: "READY", provider.StateSuspended: "SUSPENDED",
		provider.StateError: "ERROR", provider.State(4): "State(4)",
		provider.PortNoState: "NOP", provider.PortDown: "DOWN", provider.PortInit: "INIT", provider.PortArmed: "ARMED",
		provider.PortActive: "ACTIVE", provider.PortActiveDefer: "ACTIVE_DEFER", provider.PortState(6): "PortState(6)",
		provider.KindJFR: "JFR", provider.KindJetty: "JETTY", provider.KindJettyGroup: "JETTY_GROUP", provider.JettyKind(3): "JettyKind(3)",
		provider.LogEmerg: "EMERG", provider.LogError: "ERR", provider.LogNotice: "NOTICE", provider.LogWarning: "WARNING", provider.LogInfo: "INFO", provider.LogDebug: "DEBUG",
		provider.LogLevel(9): "LogLevel(9)", provider.LogLevel(-1): "LogLevel(-1)",
		provider.AccessLocalOnly: "LOCAL_ONLY", provider.AccessRead | provider.AccessWrite: "READ|WRITE",
		provider.Access(0): "NONE", provider.AccessRead | provider.Access(0x30): "READ|0x30",
		provider.WRFlags(0): "0", provider.FlagSignaled | provider.FlagFence: "FENCE|COMPLETE_ENABLE",
		provider.FlagSolicited | provider.FlagInline | provider.FlagPlaceOrderStrong | provider.FlagCompOrder: "STRONG_ORDER|COMP_ORDER|SOLICITED_ENABLE|INLINE",
		provider.FlagPlaceOrderRelax | provider.WRFlags(1<<9):                                                 "RELAX_ORDER|0x200",
		provider.CRFlags(0): "0", provider.CRFlagRecv | provider.CRFlagImm | provider.CRFlags(1<<12): "RECV|IMM|0x1000",
		provider.CROpSend: "SEND", provider.CROpWriteImm: "WRITE_WITH_IMM", provider.CROpcode(9): "CROpcode(0x9)",
		provider.AtomicOps(0): "none", provider.AtomicOpsOf(provider.OpCAS, provider.OpFXor, provider.OpWrite): "CAS,FXOR",
	} {
		assert.Equal(t, want, v.String())
	}
	// URMA values.
	assert.Equal(t, []uint8{1, 2, 4}, []uint8{uint8(provider.RM), uint8(provider.RC), uint8(provider.UM)})
	assert.Equal(t, []uint8{1, 2, 4, 8}, []uint8{uint8(provider.AccessLocalOnly), uint8(provider.AccessRead),
		uint8(provider.AccessWrite), uint8(provider.AccessAtomic)})
	assert.True(t, provider.RM.Valid())
	assert.False(t, (provider.RM | provider.UM).Valid())
	assert.False(t, provider.TransportMode(0).Valid())
}

func TestAtomicOps(t *testing.T) {
	a := provider.AtomicOpsOf(provider.OpSwap, provider.OpFAdd, provider.OpSend)
	assert.True(t, a.Has(provider.OpSwap))
	assert.True(t, a.Has(provider.OpFAdd))
	assert.False(t, a.Has(provider.OpCAS))
	assert.False(t, a.Has(provider.OpSend), "non-atomics are never in the set")
	attr := provider.DeviceAttr{Modes: provider.RM | provider.UM}
	assert.True(t, attr.SupportsMode(provider.UM))
	assert.False(t, attr.SupportsMode(provider.RC))
}

func TestAccessValidate(t *testing.T) {
	const (
		L = provider.AccessLocalOnly
		R = provider.AccessRead
		W = provider.AccessWrite
		A = provider.AccessAtomic
	)
	for _, tc := range []struct {
		a   provider.Access
		ok  bool
		msg string
	}{
		{0, false, "no access bits"},
		{L, true, ""},
		{R, true, ""},
		{R | W, true, ""},
		{R | W | A, true, ""},
		{W, false, "WRITE requires READ"},
		{A, false, "ATOMIC requires READ and WRITE"},
		{R | A, false, "ATOMIC requires READ and WRITE"},
		{W | A, false, "ATOMIC requires READ and WRITE"},
		{L | R, false, "LOCAL_ONLY cannot be combined"},
		{L | R | W | A, false, "LOCAL_ONLY cannot be combined"},
		{0x10, false, "unknown bits 0x10"},
		{R | 0x80, false, "unknown bits 0x80"},
	} {
		err := tc.a.Validate()
		if tc.ok {
			assert.NoError(t, err, "%v", tc.a)
			continue
		}
		assert.ErrorIs(t, err, provider.ErrInvalid, "%v", tc.a)
		assert.ErrorContains(t, err, tc.msg, "%v", tc.a)
	}
}

func TestLog(t *testing.T) {
	var got []string
	provider.SetLog(func(l provider.LogLevel, msg string) { got = append(got, l.String()+" "+msg) }, provider.LogWarning)
	provider.Logf(provider.LogError, "e%d", 1)
	provider.Logf(provider.LogWarning, "w")
	provider.Logf(provider.LogInfo, "i")
	provider.SetLog(nil, provider.LogDebug)
	provider.Logf(provider.LogError, "dropped")
	assert.Equal(t, []string{"ERR e1", "WARNING w"}, got)
}
