package jetty_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
)

// TestValuesMatchProvider checks that the flags, receive opcodes, kinds,
// rights and token policies of jetty and segment have the values of the
// provider's constants, which provider's TestUMDKValues pins to UMDK.
func TestValuesMatchProvider(t *testing.T) {
	pairs := []struct {
		name      string
		got, want int64
	}{
		{"RelaxOrder", int64(jetty.RelaxOrder), int64(provider.FlagPlaceOrderRelax)},
		{"StrongOrder", int64(jetty.StrongOrder), int64(provider.FlagPlaceOrderStrong)},
		{"CompOrder", int64(jetty.CompOrder), int64(provider.FlagCompOrder)},
		{"Fence", int64(jetty.Fence), int64(provider.FlagFence)},
		{"Solicited", int64(jetty.Solicited), int64(provider.FlagSolicited)},
		{"Signaled", int64(jetty.Signaled), int64(provider.FlagSignaled)},
		{"Inline", int64(jetty.Inline), int64(provider.FlagInline)},
		{"CRRecv", int64(jetty.CRRecv), int64(provider.CRFlagRecv)},
		{"CRJetty", int64(jetty.CRJetty), int64(provider.CRFlagJetty)},
		{"CRSuspendDone", int64(jetty.CRSuspendDone), int64(provider.CRFlagSuspendDone)},
		{"CRFlushErrDone", int64(jetty.CRFlushErrDone), int64(provider.CRFlagFlushErrDone)},
		{"CRImm", int64(jetty.CRImm), int64(provider.CRFlagImm)},
		{"CRSolicited", int64(jetty.CRSolicited), int64(provider.CRFlagSolicited)},
		{"CRSend", int64(jetty.CRSend), int64(provider.CROpSend)},
		{"CRSendImm", int64(jetty.CRSendImm), int64(provider.CROpSendImm)},
		{"CRSendInvalidate", int64(jetty.CRSendInvalidate), int64(provider.CROpSendInvalidate)},
		{"CRWriteImm", int64(jetty.CRWriteImm), int64(provider.CROpWriteImm)},
		{"CRFlushWrite", int64(jetty.CRFlushWrite), int64(provider.CROpFlushWrite)},
		{"KindJFR", int64(jetty.KindJFR), int64(provider.KindJFR)},
		{"KindJetty", int64(jetty.KindJetty), int64(provider.KindJetty)},
		{"KindJettyGroup", int64(jetty.KindJettyGroup), int64(provider.KindJettyGroup)},
		{"DescriptorSize", int64(jetty.DescriptorSize), int64(provider.JettyDescSize)},
		{"LocalOnly", int64(segment.LocalOnly), int64(provider.AccessLocalOnly)},
		{"Read", int64(segment.Read), int64(provider.AccessRead)},
		{"Write", int64(segment.Write), int64(provider.AccessWrite)},
		{"Atomic", int64(segment.Atomic), int64(provider.AccessAtomic)},
		{"TokenNone", int64(segment.TokenNone), int64(provider.TokenNone)},
		{"TokenPlainText", int64(segment.TokenPlainText), int64(provider.TokenPlainText)},
		{"TokenSigned", int64(segment.TokenSigned), int64(provider.TokenSigned)},
		{"TokenAllEncrypted", int64(segment.TokenAllEncrypted), int64(provider.TokenAllEncrypted)},
		{"segment.DescriptorSize", int64(segment.DescriptorSize), int64(provider.SegmentDescSize)},

		// Jetty groups.
		{"GroupPolicyRR", int64(jetty.GroupPolicyRR), int64(provider.GroupPolicyRR)},
		{"GroupPolicyHashHint", int64(jetty.GroupPolicyHashHint), int64(provider.GroupPolicyHashHint)},
	}
	for _, p := range pairs {
		assert.Equal(t, p.want, p.got, p.name)
	}
	assert.Equal(t, "FENCE|COMPLETE_ENABLE", (jetty.Fence | jetty.Signaled).String())
}
