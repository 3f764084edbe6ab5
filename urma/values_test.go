package urma_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// TestValuesMatchProvider checks that every constant of this package has
// the value of the provider's constant for it, which provider's
// TestUMDKValues pins to UMDK's headers: values cross the boundary as
// conversions.
func TestValuesMatchProvider(t *testing.T) {
	pairs := []struct {
		name      string
		got, want int64
	}{
		{"OpWrite", int64(urma.OpWrite), int64(provider.OpWrite)},
		{"OrderDefault", int64(urma.OrderDefault), int64(provider.OrderDefault)},
		{"OrderOT", int64(urma.OrderOT), int64(provider.OrderOT)},
		{"OrderOI", int64(urma.OrderOI), int64(provider.OrderOI)},
		{"OrderOL", int64(urma.OrderOL), int64(provider.OrderOL)},
		{"OrderNO", int64(urma.OrderNO), int64(provider.OrderNO)},
		{"OpWriteImm", int64(urma.OpWriteImm), int64(provider.OpWriteImm)},
		{"OpWriteNotify", int64(urma.OpWriteNotify), int64(provider.OpWriteNotify)},
		{"OpRead", int64(urma.OpRead), int64(provider.OpRead)},
		{"OpCAS", int64(urma.OpCAS), int64(provider.OpCAS)},
		{"OpSwap", int64(urma.OpSwap), int64(provider.OpSwap)},
		{"OpFAdd", int64(urma.OpFAdd), int64(provider.OpFAdd)},
		{"OpFSub", int64(urma.OpFSub), int64(provider.OpFSub)},
		{"OpFAnd", int64(urma.OpFAnd), int64(provider.OpFAnd)},
		{"OpFOr", int64(urma.OpFOr), int64(provider.OpFOr)},
		{"OpFXor", int64(urma.OpFXor), int64(provider.OpFXor)},
		{"OpSend", int64(urma.OpSend), int64(provider.OpSend)},
		{"OpSendImm", int64(urma.OpSendImm), int64(provider.OpSendImm)},
		{"OpSendInvalidate", int64(urma.OpSendInvalidate), int64(provider.OpSendInvalidate)},
		{"OpNOP", int64(urma.OpNOP), int64(provider.OpNOP)},
		{"OpWriteAtomic", int64(urma.OpWriteAtomic), int64(provider.OpWriteAtomic)},
		{"OpFlushDMA", int64(urma.OpFlushDMA), int64(provider.OpFlushDMA)},
		{"CRSuccess", int64(urma.CRSuccess), int64(provider.CRSuccess)},
		{"CRUnsupportedOpcodeErr", int64(urma.CRUnsupportedOpcodeErr), int64(provider.CRUnsupportedOpcodeErr)},
		{"CRLocLenErr", int64(urma.CRLocLenErr), int64(provider.CRLocLenErr)},
		{"CRLocOperationErr", int64(urma.CRLocOperationErr), int64(provider.CRLocOperationErr)},
		{"CRLocAccessErr", int64(urma.CRLocAccessErr), int64(provider.CRLocAccessErr)},
		{"CRRemRespLenErr", int64(urma.CRRemRespLenErr), int64(provider.CRRemRespLenErr)},
		{"CRRemUnsupportedReqErr", int64(urma.CRRemUnsupportedReqErr), int64(provider.CRRemUnsupportedReqErr)},
		{"CRRemOperationErr", int64(urma.CRRemOperationErr), int64(provider.CRRemOperationErr)},
		{"CRRemAccessAbortErr", int64(urma.CRRemAccessAbortErr), int64(provider.CRRemAccessAbortErr)},
		{"CRAckTimeoutErr", int64(urma.CRAckTimeoutErr), int64(provider.CRAckTimeoutErr)},
		{"CRRNRRetryCntExcErr", int64(urma.CRRNRRetryCntExcErr), int64(provider.CRRNRRetryCntExcErr)},
		{"CRWRFlushErr", int64(urma.CRWRFlushErr), int64(provider.CRWRFlushErr)},
		{"CRWRSuspendDone", int64(urma.CRWRSuspendDone), int64(provider.CRWRSuspendDone)},
		{"CRWRFlushErrDone", int64(urma.CRWRFlushErrDone), int64(provider.CRWRFlushErrDone)},
		{"CRWRUnhandled", int64(urma.CRWRUnhandled), int64(provider.CRWRUnhandled)},
		{"CRLocDataPoison", int64(urma.CRLocDataPoison), int64(provider.CRLocDataPoison)},
		{"CRRemDataPoison", int64(urma.CRRemDataPoison), int64(provider.CRRemDataPoison)},
		{"CRSignatureErr", int64(urma.CRSignatureErr), int64(provider.CRSignatureErr)},
		{"RM", int64(urma.RM), int64(provider.RM)},
		{"RC", int64(urma.RC), int64(provider.RC)},
		{"UM", int64(urma.UM), int64(provider.UM)},
		{"StateReset", int64(urma.StateReset), int64(provider.StateReset)},
		{"StateReady", int64(urma.StateReady), int64(provider.StateReady)},
		{"StateSuspended", int64(urma.StateSuspended), int64(provider.StateSuspended)},
		{"StateError", int64(urma.StateError), int64(provider.StateError)},
		{"EventJFCErr", int64(urma.EventJFCErr), int64(provider.EventJFCErr)},
		{"EventJFSErr", int64(urma.EventJFSErr), int64(provider.EventJFSErr)},
		{"EventJFRErr", int64(urma.EventJFRErr), int64(provider.EventJFRErr)},
		{"EventJFRLimit", int64(urma.EventJFRLimit), int64(provider.EventJFRLimit)},
		{"EventJettyErr", int64(urma.EventJettyErr), int64(provider.EventJettyErr)},
		{"EventJettyLimit", int64(urma.EventJettyLimit), int64(provider.EventJettyLimit)},
		{"EventJettyGrpErr", int64(urma.EventJettyGrpErr), int64(provider.EventJettyGrpErr)},
		{"EventPortActive", int64(urma.EventPortActive), int64(provider.EventPortActive)},
		{"EventPortDown", int64(urma.EventPortDown), int64(provider.EventPortDown)},
		{"EventDevFatal", int64(urma.EventDevFatal), int64(provider.EventDevFatal)},
		{"EventEIDChange", int64(urma.EventEIDChange), int64(provider.EventEIDChange)},
		{"EventELRErr", int64(urma.EventELRErr), int64(provider.EventELRErr)},
		{"EventELRDone", int64(urma.EventELRDone), int64(provider.EventELRDone)},
		{"PortNoState", int64(urma.PortNoState), int64(provider.PortNoState)},
		{"PortDown", int64(urma.PortDown), int64(provider.PortDown)},
		{"PortInit", int64(urma.PortInit), int64(provider.PortInit)},
		{"PortArmed", int64(urma.PortArmed), int64(provider.PortArmed)},
		{"PortActive", int64(urma.PortActive), int64(provider.PortActive)},
		{"PortActiveDefer", int64(urma.PortActiveDefer), int64(provider.PortActiveDefer)},
		{"TransportInvalid", int64(urma.TransportInvalid), int64(provider.TransportInvalid)},
		{"TransportUB", int64(urma.TransportUB), int64(provider.TransportUB)},
		{"TransportLoopback", int64(urma.TransportLoopback), int64(provider.TransportLoopback)},
		{"TransportIB", int64(urma.TransportIB), int64(provider.TransportIB)},
		{"TransportRoCE", int64(urma.TransportRoCE), int64(provider.TransportRoCE)},
		{"TransportIWARP", int64(urma.TransportIWARP), int64(provider.TransportIWARP)},
		{"ViewSoftware", int64(urma.ViewSoftware), int64(provider.ViewSoftware)},
		{"ViewOffload", int64(urma.ViewOffload), int64(provider.ViewOffload)},
		{"StatusSuccess", int64(urma.StatusSuccess), int64(provider.StatusSuccess)},
		{"StatusAgain", int64(urma.StatusAgain), int64(provider.StatusAgain)},
		{"StatusFail", int64(urma.StatusFail), int64(provider.StatusFail)},
		{"LogEmerg", int64(urma.LogEmerg), int64(provider.LogEmerg)},
		{"LogAlert", int64(urma.LogAlert), int64(provider.LogAlert)},
		{"LogCrit", int64(urma.LogCrit), int64(provider.LogCrit)},
		{"LogError", int64(urma.LogError), int64(provider.LogError)},
		{"LogWarning", int64(urma.LogWarning), int64(provider.LogWarning)},
		{"LogNotice", int64(urma.LogNotice), int64(provider.LogNotice)},
		{"LogInfo", int64(urma.LogInfo), int64(provider.LogInfo)},
		{"LogDebug", int64(urma.LogDebug), int64(provider.LogDebug)},
	}
	for _, p := range pairs {
		assert.Equal(t, p.want, p.got, p.name)
	}
	// urma_jfr_state_t: a JFR has no SUSPENDED state, so its ERROR is 2.
	assert.Equal(t, []int64{0, 1, 2}, []int64{int64(urma.JFRStateReset), int64(urma.JFRStateReady), int64(urma.JFRStateError)})
	assert.Equal(t, "ERROR", urma.JFRStateError.String())
	assert.Equal(t, "JFRState(3)", urma.JFRState(3).String())
	assert.Equal(t, "WRITE", urma.OpWrite.String())
	assert.Equal(t, urma.AtomicOps(provider.AtomicOpsOf(provider.OpCAS, provider.OpFXor)), urma.AtomicOpsOf(urma.OpCAS, urma.OpFXor))
}
