package wrcheck

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

func TestChecks(t *testing.T) {
	verbs := Limits{Device: "rxe0", Mode: provider.RM, MaxSGE: 2, MaxInline: 16, MaxReadSGE: 1, MaxMsgSize: 1 << 20,
		AtomicOps: provider.AtomicOpsOf(provider.OpCAS, provider.OpFAdd), ImmData: true, Imm32: true}
	iwarp := verbs
	iwarp.ImmData, iwarp.AtomicOps = false, 0
	um := verbs
	um.Mode = provider.UM
	sge := func(n uint32) provider.SGE { return provider.SGE{Len: n} }
	cases := []struct {
		name string
		l    Limits
		w    provider.WR
		want error // nil: accepted
	}{
		{"send", verbs, provider.WR{Opcode: provider.OpSend, Local: []provider.SGE{sge(8)}}, nil},
		{"swap not on device", verbs, provider.WR{Opcode: provider.OpSwap}, provider.ErrNotSupported},
		{"send invalidate", verbs, provider.WR{Opcode: provider.OpSendInvalidate}, provider.ErrNotSupported},
		{"imm without ImmData", iwarp, provider.WR{Opcode: provider.OpWriteImm}, provider.ErrNotSupported},
		{"atomic without atomics", iwarp, provider.WR{Opcode: provider.OpCAS}, provider.ErrNotSupported},
		{"one-sided on UM", um, provider.WR{Opcode: provider.OpWrite}, provider.ErrNotSupported},
		{"too many sges", verbs, provider.WR{Opcode: provider.OpSend, Local: []provider.SGE{sge(1), sge(1), sge(1)}}, provider.ErrInvalid},
		{"inline too large", verbs, provider.WR{Opcode: provider.OpSend, Flags: provider.FlagInline, Inline: make([]byte, 17)}, provider.ErrInvalid},
		{"inline read", verbs, provider.WR{Opcode: provider.OpRead, Flags: provider.FlagInline, Local: []provider.SGE{sge(8)}}, provider.ErrInvalid},
		{"read without sge", verbs, provider.WR{Opcode: provider.OpRead}, provider.ErrInvalid},
		{"read scatter above MaxReadSGE", verbs, provider.WR{Opcode: provider.OpRead, Local: []provider.SGE{sge(4), sge(4)}}, provider.ErrInvalid},
		{"message too long", verbs, provider.WR{Opcode: provider.OpSend, Local: []provider.SGE{sge(1<<20 + 1)}}, provider.ErrInvalid},
		{"64-bit immediate on verbs", verbs, provider.WR{Opcode: provider.OpSendImm, Imm: 1 << 40}, provider.ErrInvalid},
		{"misaligned atomic", verbs, provider.WR{Opcode: provider.OpFAdd, Local: []provider.SGE{sge(8)}, Remote: provider.SGE{Addr: 4, Len: 8}}, provider.ErrInvalid},
		{"short atomic result", verbs, provider.WR{Opcode: provider.OpCAS, Local: []provider.SGE{sge(4)}, Remote: sge(8)}, provider.ErrInvalid},
		{"good atomic", verbs, provider.WR{Opcode: provider.OpCAS, Local: []provider.SGE{sge(8)}, Remote: sge(8)}, nil},
	}
	for _, c := range cases {
		err := Opcode(&c.w, &c.l)
		if err == nil {
			err = Shape(&c.w, &c.l)
		}
		if c.want == nil {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorIs(t, err, c.want, c.name)
		}
	}
	loop := verbs
	loop.Imm32 = false
	w := provider.WR{Opcode: provider.OpSendImm, Imm: 1 << 40}
	require.NoError(t, Shape(&w, &loop), "64-bit immediate where the provider carries it")
}
