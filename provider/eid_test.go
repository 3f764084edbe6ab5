package provider_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/provider"
)

func TestParseEID(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		mapped   bool
	}{
		{"127.0.0.1", "::ffff:127.0.0.1", true},
		{"::ffff:127.0.0.4", "::ffff:127.0.0.4", true},
		{" 10.1.2.3\n", "::ffff:10.1.2.3", true},
		{"fe80::1", "fe80::1", false},
		{"2001:db8::ff00:42:8329", "2001:db8::ff00:42:8329", false},
		{"::", "::", false},
		{"FE80:0:0:0:0:0:0:1", "fe80::1", false},
	} {
		e, err := provider.ParseEID(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, e.String(), tc.in)
		assert.Equal(t, tc.mapped, e.IsIPv4Mapped(), tc.in)
		again, err := provider.ParseEID(e.String())
		require.NoError(t, err)
		assert.Equal(t, e, again, "round trip of %q", tc.in)
	}
}

func TestParseEIDBad(t *testing.T) {
	for _, in := range []string{"", "localhost", "1.2.3", "1.2.3.256", "fe80::1%eth0", "::ffff:1.2.3.4.5",
		"1:2:3:4:5:6:7:8:9", "0x7f000001", "127.0.0.1/8", "[::1]"} {
		_, err := provider.ParseEID(in)
		require.Error(t, err, "%q", in)
		assert.True(t, errors.Is(err, provider.ErrInvalid), "%q: %v", in, err)
		assert.Contains(t, err.Error(), "parse eid")
	}
}

func TestEIDBytesAndAddr(t *testing.T) {
	e := provider.EIDFromAddr(netip.MustParseAddr("192.168.1.2"))
	assert.Equal(t, provider.EID{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 1, 15: 2}, e)
	assert.True(t, e.Addr().Is4In6())
	assert.Equal(t, "192.168.1.2", e.Addr().Unmap().String())
	assert.False(t, e.IsZero())
	assert.True(t, provider.EID{}.IsZero())
	assert.Equal(t, "::", provider.EID{}.String())
}

func TestEIDText(t *testing.T) {
	type doc struct {
		EID provider.EID `json:"eid"`
	}
	b, err := json.Marshal(doc{EID: provider.EIDFromAddr(netip.MustParseAddr("127.0.0.2"))})
	require.NoError(t, err)
	assert.JSONEq(t, `{"eid":"::ffff:127.0.0.2"}`, string(b))
	var d doc
	require.NoError(t, json.Unmarshal([]byte(`{"eid":"fe80::7"}`), &d))
	assert.Equal(t, "fe80::7", d.EID.String())
	err = json.Unmarshal([]byte(`{"eid":"nope"}`), &d)
	assert.ErrorIs(t, err, provider.ErrInvalid)
	assert.Equal(t, "fe80::7", d.EID.String(), "a failed unmarshal leaves the value alone")
}

// FuzzParseEID: EIDs come from command lines, configuration and JSON sent by
// peers. Whatever ParseEID accepts must print in a form it parses back to
// the same EID, UnmarshalText must agree with it, and every 16-byte EID must
// print parseably (a peer can send any 16 bytes in a descriptor).
func FuzzParseEID(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::ffff:127.0.0.4", "fe80::1", " ::1\n", "::", "fe80::1%eth0",
		"1.2.3.256", "[::1]", "0x7f000001", "::ffff:1.2.3.4.5", "1:2:3:4:5:6:7:8", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := provider.ParseEID(s)
		var u provider.EID
		uerr := u.UnmarshalText([]byte(s))
		require.Equal(t, err == nil, uerr == nil, "UnmarshalText and ParseEID disagree on %q", s)
		if err != nil {
			require.ErrorIs(t, err, provider.ErrInvalid)
			require.ErrorIs(t, uerr, provider.ErrInvalid)
			require.True(t, u.IsZero(), "a failed UnmarshalText must leave the value alone")
		} else {
			require.Equal(t, e, u)
			again, err := provider.ParseEID(e.String())
			require.NoError(t, err, "%q prints as %q", s, e)
			require.Equal(t, e, again)
			text, err := e.MarshalText()
			require.NoError(t, err)
			require.Equal(t, e.String(), string(text))
			if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && a.Is4() {
				require.True(t, e.IsIPv4Mapped(), "IPv4 %q must map to ::ffff:a.b.c.d", s)
			}
		}

		// Any 16 bytes are an EID a peer can send; its text must parse back.
		var raw provider.EID
		copy(raw[:], s)
		back, err := provider.ParseEID(raw.String())
		require.NoError(t, err, "% x prints as %q", raw[:], raw)
		require.Equal(t, raw, back)
	})
}
