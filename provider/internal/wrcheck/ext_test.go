package wrcheck

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

type fakeSeg struct{ d provider.SegmentDesc }

func (f *fakeSeg) Desc() provider.SegmentDesc { return f.d }
func (f *fakeSeg) Close() error               { return nil }

func TestExtChecks(t *testing.T) {
	on := Limits{Device: "dev0", Mode: provider.RM, MaxSGE: 2, MaxInline: 16, MaxReadSGE: 2, MaxMsgSize: 1 << 20,
		SendInvalidate: true, WriteNotify: true}
	off := on
	off.SendInvalidate, off.WriteNotify = false, false
	um := on
	um.Mode = provider.UM
	seg := &fakeSeg{}
	var tgt provider.Target = seg
	data := []provider.SGE{{Seg: seg, Len: 16}}
	notify := func(n provider.SGE) provider.WR {
		return provider.WR{Opcode: provider.OpWriteNotify, Local: data, Remote: provider.SGE{Seg: seg, Len: 16}, Notify: n}
	}
	cases := []struct {
		name string
		l    Limits
		w    provider.WR
		want error
	}{
		{"notify", on, notify(provider.SGE{Seg: seg, Addr: 64, Len: 8}), nil},
		{"notify without the device", off, notify(provider.SGE{Seg: seg, Addr: 64, Len: 8}), provider.ErrNotSupported},
		{"notify on UM", um, notify(provider.SGE{Seg: seg, Addr: 64, Len: 8}), provider.ErrNotSupported},
		{"notify unaligned", on, notify(provider.SGE{Seg: seg, Addr: 60, Len: 8}), provider.ErrInvalid},
		{"notify of 4 bytes", on, notify(provider.SGE{Seg: seg, Addr: 64, Len: 4}), provider.ErrInvalid},
		{"notify without a segment", on, notify(provider.SGE{Addr: 64, Len: 8}), provider.ErrInvalid},
		{"notify wrapping", on, notify(provider.SGE{Seg: seg, Addr: math.MaxUint64 - 7, Len: 8}), provider.ErrInvalid},
		{"notify remote shorter than data", on, provider.WR{Opcode: provider.OpWriteNotify, Local: data,
			Remote: provider.SGE{Seg: seg, Len: 8}, Notify: provider.SGE{Seg: seg, Len: 8}}, provider.ErrInvalid},
		{"invalidate", on, provider.WR{Opcode: provider.OpSendInvalidate, Local: data, Invalidate: &tgt}, nil},
		{"invalidate nothing", on, provider.WR{Opcode: provider.OpSendInvalidate, Local: data}, provider.ErrInvalid},
		{"invalidate without the device", off, provider.WR{Opcode: provider.OpSendInvalidate, Invalidate: &tgt}, provider.ErrNotSupported},
		{"invalidate on UM", um, provider.WR{Opcode: provider.OpSendInvalidate, Invalidate: &tgt}, provider.ErrNotSupported},
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
}

func TestNotifyAndInvalidateTargets(t *testing.T) {
	d := provider.SegmentDesc{EID: provider.EID{1}, UASID: 7, VA: 0x1000, Len: 0x1000, Access: provider.AccessRead | provider.AccessWrite}
	w := provider.WR{Notify: provider.SGE{Addr: 0x1ff8, Len: 8}}
	require.NoError(t, Notify(&w, d))
	w.Notify.Addr = 0x2000
	require.ErrorIs(t, Notify(&w, d), provider.ErrRange)
	ro := d
	ro.Access = provider.AccessRead
	w.Notify.Addr = 0x1000
	require.ErrorIs(t, Notify(&w, ro), provider.ErrPermission)

	require.NoError(t, Invalidate(d, provider.JettyID{EID: d.EID, UASID: 7, ID: 3}))
	require.ErrorIs(t, Invalidate(d, provider.JettyID{EID: d.EID, UASID: 8, ID: 3}), provider.ErrPermission)
	require.ErrorIs(t, Invalidate(d, provider.JettyID{EID: provider.EID{2}, UASID: 7}), provider.ErrPermission)
}
