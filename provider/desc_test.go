package provider_test

import (
	"encoding"
	"encoding/binary"
	"errors"
	"math"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/provider"
)

var (
	_ encoding.BinaryMarshaler   = provider.SegmentDesc{}
	_ encoding.BinaryUnmarshaler = (*provider.SegmentDesc)(nil)
	_ encoding.BinaryAppender    = provider.SegmentDesc{}
	_ encoding.BinaryMarshaler   = provider.JettyDesc{}
	_ encoding.BinaryUnmarshaler = (*provider.JettyDesc)(nil)
)

func segDesc() provider.SegmentDesc {
	return provider.SegmentDesc{
		EID:         provider.EIDFromAddr(netip.MustParseAddr("127.0.0.3")),
		UASID:       0x01020304,
		VA:          0x7f00_0000_1000,
		Len:         1 << 20,
		Access:      provider.AccessRead | provider.AccessWrite | provider.AccessAtomic,
		TokenPolicy: provider.TokenPlainText,
		TokenID:     0xa0b0c0d0,
	}
}

func TestSegmentDescRoundTrip(t *testing.T) {
	for _, d := range []provider.SegmentDesc{
		segDesc(),
		{Len: 1, Access: provider.AccessLocalOnly},
		{VA: math.MaxUint64 - 9, Len: 9, Access: provider.AccessRead, TokenPolicy: provider.TokenAllEncrypted},
	} {
		b, err := d.MarshalBinary()
		require.NoError(t, err)
		require.Len(t, b, provider.SegmentDescSize)
		var got provider.SegmentDesc
		require.NoError(t, got.UnmarshalBinary(b))
		assert.Equal(t, d, got)
	}
}

func TestSegmentDescLayout(t *testing.T) {
	d := segDesc()
	b, err := d.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, "URSG", string(b[:4]))
	assert.Equal(t, []byte{1, byte(d.Access), byte(d.TokenPolicy), 0}, b[4:8])
	assert.Equal(t, d.EID[:], b[8:24])
	assert.Equal(t, d.UASID, binary.BigEndian.Uint32(b[24:]))
	assert.Equal(t, d.TokenID, binary.BigEndian.Uint32(b[28:]))
	assert.Equal(t, d.VA, binary.BigEndian.Uint64(b[32:]))
	assert.Equal(t, d.Len, binary.BigEndian.Uint64(b[40:]))

	// AppendBinary appends after existing bytes.
	pre := []byte("xy")
	out, err := d.AppendBinary(pre)
	require.NoError(t, err)
	assert.Equal(t, append([]byte("xy"), b...), out)
}

func TestSegmentDescRejects(t *testing.T) {
	good, err := segDesc().MarshalBinary()
	require.NoError(t, err)
	mut := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	for name, b := range map[string][]byte{
		"empty":            nil,
		"short":            good[:47],
		"long":             append(append([]byte(nil), good...), 0),
		"magic":            mut(func(b []byte) []byte { b[0] = 'X'; return b }),
		"jetty magic":      mut(func(b []byte) []byte { copy(b, "URJT"); return b }),
		"version 0":        mut(func(b []byte) []byte { b[4] = 0; return b }),
		"version 2":        mut(func(b []byte) []byte { b[4] = 2; return b }),
		"reserved":         mut(func(b []byte) []byte { b[7] = 1; return b }),
		"no access":        mut(func(b []byte) []byte { b[5] = 0; return b }),
		"unknown access":   mut(func(b []byte) []byte { b[5] = 0x10 | byte(provider.AccessRead); return b }),
		"write no read":    mut(func(b []byte) []byte { b[5] = byte(provider.AccessWrite); return b }),
		"local plus read":  mut(func(b []byte) []byte { b[5] = byte(provider.AccessLocalOnly | provider.AccessRead); return b }),
		"atomic only":      mut(func(b []byte) []byte { b[5] = byte(provider.AccessAtomic); return b }),
		"policy":           mut(func(b []byte) []byte { b[6] = 4; return b }),
		"policy 255":       mut(func(b []byte) []byte { b[6] = 255; return b }),
		"zero len":         mut(func(b []byte) []byte { binary.BigEndian.PutUint64(b[40:], 0); return b }),
		"overflow":         mut(func(b []byte) []byte { binary.BigEndian.PutUint64(b[32:], math.MaxUint64); return b }),
		"overflow by one":  mut(func(b []byte) []byte { binary.BigEndian.PutUint64(b[32:], math.MaxUint64-(1<<20)+2); return b }),
		"overflow max len": mut(func(b []byte) []byte { binary.BigEndian.PutUint64(b[40:], math.MaxUint64); return b }),
	} {
		t.Run(name, func(t *testing.T) {
			d := segDesc()
			d.UASID = 99 // marker: must stay untouched
			err := d.UnmarshalBinary(b)
			require.Error(t, err)
			assert.True(t, errors.Is(err, provider.ErrInvalid), "%v", err)
			assert.Equal(t, uint32(99), d.UASID, "a rejected input must not change the value")
		})
	}
}

func TestSegmentDescMarshalValidates(t *testing.T) {
	for name, f := range map[string]func(*provider.SegmentDesc){
		"zero len": func(d *provider.SegmentDesc) { d.Len = 0 },
		"overflow": func(d *provider.SegmentDesc) { d.VA = math.MaxUint64 },
		"access":   func(d *provider.SegmentDesc) { d.Access = 0 },
		"policy":   func(d *provider.SegmentDesc) { d.TokenPolicy = 9 },
	} {
		d := segDesc()
		f(&d)
		_, err := d.MarshalBinary()
		assert.ErrorIs(t, err, provider.ErrInvalid, name)
		pre := []byte("keep")
		out, err := d.AppendBinary(pre)
		assert.Error(t, err, name)
		assert.Equal(t, "keep", string(out), name)
	}
}

func jettyDesc() provider.JettyDesc {
	return provider.JettyDesc{
		ID:          provider.JettyID{EID: provider.EIDFromAddr(netip.MustParseAddr("fe80::9")), UASID: 5, ID: 0xdeadbeef},
		Kind:        provider.KindJetty,
		Mode:        provider.RC,
		TokenPolicy: provider.TokenPlainText,
	}
}

func TestJettyDescRoundTrip(t *testing.T) {
	for _, d := range []provider.JettyDesc{
		jettyDesc(),
		{Kind: provider.KindJFR, Mode: provider.RM},
		{Kind: provider.KindJFR, Mode: provider.UM, TokenPolicy: provider.TokenSigned},
	} {
		b, err := d.MarshalBinary()
		require.NoError(t, err)
		require.Len(t, b, provider.JettyDescSize)
		assert.Equal(t, "URJT", string(b[:4]))
		var got provider.JettyDesc
		require.NoError(t, got.UnmarshalBinary(b))
		assert.Equal(t, d, got)
	}
}

func TestJettyDescRejects(t *testing.T) {
	good, err := jettyDesc().MarshalBinary()
	require.NoError(t, err)
	mut := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	for name, b := range map[string][]byte{
		"empty":        nil,
		"short":        good[:31],
		"long":         append(append([]byte(nil), good...), 0),
		"magic":        mut(func(b []byte) { copy(b, "URSG") }),
		"version 1":    mut(func(b []byte) { b[4] = 1 }),
		"version 3":    mut(func(b []byte) { b[4] = 3 }),
		"kind 3":       mut(func(b []byte) { b[5] = 3 }),
		"mode 0":       mut(func(b []byte) { b[6] = 0 }),
		"mode RM|RC":   mut(func(b []byte) { b[6] = byte(provider.RM | provider.RC) }),
		"mode 8":       mut(func(b []byte) { b[6] = 8 }),
		"token policy": mut(func(b []byte) { b[7] = 4 }),
	} {
		t.Run(name, func(t *testing.T) {
			d := jettyDesc()
			err := d.UnmarshalBinary(b)
			require.Error(t, err)
			assert.True(t, errors.Is(err, provider.ErrInvalid), "%v", err)
			assert.Equal(t, jettyDesc(), d, "a rejected input must not change the value")
		})
	}
	group := mut(func(b []byte) { b[5] = byte(provider.KindJettyGroup) })
	d := jettyDesc()
	require.ErrorIs(t, d.UnmarshalBinary(group), provider.ErrInvalid, "a jetty group descriptor in RC mode")
	assert.Equal(t, jettyDesc(), d)
	g := provider.JettyDesc{ID: jettyDesc().ID, Kind: provider.KindJettyGroup, Mode: provider.RM}
	b, err := g.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, d.UnmarshalBinary(b), "a jetty group descriptor")
	assert.Equal(t, g, d)
	d = jettyDesc()
	_, err = provider.JettyDesc{Kind: provider.KindJFR}.MarshalBinary()
	assert.ErrorIs(t, err, provider.ErrInvalid, "zero mode")
}

func TestDescStrings(t *testing.T) {
	assert.Equal(t, "seg{eid=::ffff:127.0.0.3 uasid=16909060 va=0x7f0000001000 len=1048576 access=READ|WRITE|ATOMIC token=PLAIN_TEXT/2695938256}",
		segDesc().String())
	assert.Equal(t, "JETTY{fe80::9/5/3735928559 mode=RC token=PLAIN_TEXT}", jettyDesc().String())
	assert.Equal(t, "fe80::9/5/3735928559", jettyDesc().ID.String())
}

// FuzzSegmentDesc: a segment descriptor arrives from a peer (out of band,
// or in a control request), so the decoder must reject rather than panic,
// leave the value alone when it rejects, and accept only the canonical
// encoding: every byte it accepts must come back from MarshalBinary.
func FuzzSegmentDesc(f *testing.F) {
	for _, d := range []provider.SegmentDesc{
		segDesc(),
		{Len: 1, Access: provider.AccessLocalOnly},
		{VA: math.MaxUint64 - 9, Len: 9, Access: provider.AccessRead, TokenPolicy: provider.TokenAllEncrypted},
	} {
		b, err := d.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
	}
	good, _ := segDesc().MarshalBinary()
	f.Add(good[:provider.SegmentDescSize-1])
	f.Add(append(append([]byte{}, good...), 0))
	f.Add(with(good, 7, 1))                                           // reserved byte
	f.Add(append(append([]byte{}, good[:40]...), make([]byte, 8)...)) // zero length
	f.Add([]byte("URSG"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := segDesc()
		before := d
		if err := d.UnmarshalBinary(b); err != nil {
			require.ErrorIs(t, err, provider.ErrInvalid)
			require.Equal(t, before, d, "a rejected descriptor must not change the value")
			return
		}
		require.NoError(t, d.Validate())
		again, err := d.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, again, "accepted bytes must be the canonical encoding")
		var d2 provider.SegmentDesc
		require.NoError(t, d2.UnmarshalBinary(again))
		require.Equal(t, d, d2)
		appended, err := d.AppendBinary([]byte("xy"))
		require.NoError(t, err)
		require.Equal(t, append([]byte("xy"), b...), appended)
	})
}

// FuzzJettyDesc is FuzzSegmentDesc for JFR and Jetty descriptors.
func FuzzJettyDesc(f *testing.F) {
	b, err := jettyDesc().MarshalBinary()
	require.NoError(f, err)
	f.Add(b)
	f.Add(b[:provider.JettyDescSize-1])
	f.Add(append(append([]byte{}, b...), 0))
	f.Add(with(b, 5, 3)) // kind
	f.Add(with(b, 5, 2)) // a jetty group
	f.Add(with(b, 6, 0)) // mode
	f.Add(with(b, 7, 9)) // token policy
	f.Add([]byte("URJT"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := jettyDesc()
		before := d
		if err := d.UnmarshalBinary(b); err != nil {
			require.ErrorIs(t, err, provider.ErrInvalid)
			require.Equal(t, before, d, "a rejected descriptor must not change the value")
			return
		}
		require.NoError(t, d.Validate())
		again, err := d.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, again, "accepted bytes must be the canonical encoding")
		var d2 provider.JettyDesc
		require.NoError(t, d2.UnmarshalBinary(again))
		require.Equal(t, d, d2)
	})
}

// with returns a copy of b with b[i] = v.
func with(b []byte, i int, v byte) []byte {
	c := append([]byte{}, b...)
	c[i] = v
	return c
}
