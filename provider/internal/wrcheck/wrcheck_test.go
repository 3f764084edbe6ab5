package wrcheck

import (
	"math"
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
		{"local sge wrapping", verbs, provider.WR{Opcode: provider.OpSend, Local: []provider.SGE{{Addr: math.MaxUint64 - 3, Len: 8}}}, provider.ErrInvalid},
		{"local sge ending at the top", verbs, provider.WR{Opcode: provider.OpSend, Local: []provider.SGE{{Addr: math.MaxUint64 - 7, Len: 7}}}, nil},
		{"remote range wrapping", verbs, provider.WR{Opcode: provider.OpWrite, Local: []provider.SGE{sge(16)}, Remote: provider.SGE{Addr: math.MaxUint64 - 7}}, provider.ErrInvalid},
		{"remote sge wrapping", verbs, provider.WR{Opcode: provider.OpRead, Local: []provider.SGE{sge(0)}, Remote: provider.SGE{Addr: math.MaxUint64, Len: 4}}, provider.ErrInvalid},
		{"atomic on the last word", verbs, provider.WR{Opcode: provider.OpFAdd, Local: []provider.SGE{sge(8)}, Remote: provider.SGE{Addr: math.MaxUint64 - 7}}, provider.ErrInvalid},
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

func TestInSegment(t *testing.T) {
	d := provider.SegmentDesc{VA: 0x1000, Len: 64}
	cases := []struct {
		name string
		sg   provider.SGE
		ok   bool
	}{
		{"whole", provider.SGE{Addr: 0x1000, Len: 64}, true},
		{"empty at the end", provider.SGE{Addr: 0x1040}, true},
		{"past the end", provider.SGE{Addr: 0x1020, Len: 33}, false},
		{"before the start", provider.SGE{Addr: 0xff8, Len: 16}, false},
		{"after the end", provider.SGE{Addr: 0x1041}, false},
		{"wrapping", provider.SGE{Addr: math.MaxUint64 - 3, Len: 8}, false},
	}
	for _, c := range cases {
		err := InSegment(&c.sg, d.VA, d.Len)
		require.Equal(t, c.ok, Inside(&c.sg, d.VA, d.Len), "Inside agrees with InSegment: %s", c.name)
		if c.ok {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorIs(t, err, provider.ErrRange, c.name)
		}
	}
	top := provider.SegmentDesc{VA: math.MaxUint64 - 63, Len: 64}
	require.NoError(t, InSegment(&provider.SGE{Addr: math.MaxUint64 - 63, Len: 64}, top.VA, top.Len), "a segment at the top of the address space")
}
