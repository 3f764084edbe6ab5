package providertest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var segmentTests = []test{
	{"access validation", testAccessValidation},
	{"plain-text token", testTokens},
	{"descriptor round trip", testDescriptorRoundTrip},
	{"import of unknown or altered segment", testImportUnknown},
	{"shared token id", testSharedTokenID},
	{"registered caller memory", testRegister},
}

func testAccessValidation(t *testing.T, e *env) {
	cases := []struct {
		access segment.Access
		ok     bool
	}{
		{segment.LocalOnly, true},
		{segment.Read, true},
		{segment.Read | segment.Write, true},
		{rwa, true},
		{0, false},
		{segment.LocalOnly | segment.Read, false},
		{segment.Write, false},
		{segment.Atomic | segment.Read, false},
		{segment.Atomic | segment.Write, false},
		{0x10 | segment.Read, false},
	}
	for _, c := range cases {
		s, err := segment.Alloc(e.a, 4096, segment.Config{Access: c.access})
		if c.ok {
			require.NoError(t, err, "%v", c.access)
			require.NoError(t, s.Unregister())
		} else {
			require.ErrorIs(t, err, urma.ErrInvalid, "%v", c.access)
		}
		_, err = segment.Register(e.a, e.callerBuf(e.a, 64), segment.Config{Access: c.access})
		require.Equal(t, c.ok, err == nil, "register %v: %v", c.access, err)
	}
	_, err := segment.Alloc(e.a, 0, segment.Config{Access: segment.Read})
	require.ErrorIs(t, err, urma.ErrInvalid)
}

func testTokens(t *testing.T, e *env) {
	_, err := segment.Alloc(e.a, 64, segment.Config{Access: segment.Read, TokenPolicy: segment.TokenPlainText})
	require.ErrorIs(t, err, urma.ErrInvalid, "PLAIN_TEXT with token 0")
	s, err := segment.Alloc(e.b, 64, segment.Config{Access: rwa, TokenPolicy: segment.TokenPlainText, Token: 0x5ec2e7})
	require.NoError(t, err)
	_, err = segment.Import(t.Context(), e.a, s.Descriptor(), 0x5ec2e8)
	require.ErrorIs(t, err, urma.ErrPermission)
	tg, err := segment.Import(t.Context(), e.a, s.Descriptor(), 0x5ec2e7)
	require.NoError(t, err)
	require.Equal(t, s.Descriptor(), tg.Descriptor())

	jfc := e.jfc(e.b, 0)
	_, err = jetty.NewJFR(e.b, jetty.JFRConfig{JFC: jfc, TokenPolicy: segment.TokenPlainText})
	require.ErrorIs(t, err, urma.ErrInvalid)
	jfr, err := jetty.NewJFR(e.b, jetty.JFRConfig{JFC: jfc, TokenPolicy: segment.TokenPlainText, Token: 77})
	require.NoError(t, err)
	_, err = jetty.ImportJFR(t.Context(), e.a, jfr.Descriptor(), 78)
	require.ErrorIs(t, err, urma.ErrPermission)
	_, err = jetty.ImportJFR(t.Context(), e.a, jfr.Descriptor(), 77)
	require.NoError(t, err)
	_, err = jetty.ImportJetty(t.Context(), e.a, jfr.Descriptor(), 77)
	require.ErrorIs(t, err, urma.ErrInvalid, "a JFR descriptor imported as a jetty")
}

func testDescriptorRoundTrip(t *testing.T, e *env) {
	s, err := segment.Alloc(e.b, 8192, segment.Config{Access: segment.Read | segment.Write, TokenPolicy: segment.TokenPlainText, Token: 1})
	require.NoError(t, err)
	raw, err := s.Descriptor().MarshalBinary()
	require.NoError(t, err)
	require.Len(t, raw, segment.DescriptorSize)
	var d segment.Descriptor
	require.NoError(t, d.UnmarshalBinary(raw))
	require.Equal(t, s.Descriptor(), d)
	require.Equal(t, e.b.EID(), d.EID)
	require.Equal(t, uint64(8192), d.Len)
	require.Equal(t, s.VA(), d.VA)
	_, err = segment.Import(t.Context(), e.a, d, 1)
	require.NoError(t, err)
	require.Error(t, d.UnmarshalBinary(raw[:47]))

	jfr := e.receiver(jetty.JFRConfig{}).jfr
	jraw, err := jfr.Descriptor().MarshalBinary()
	require.NoError(t, err)
	var jd jetty.Descriptor
	require.NoError(t, jd.UnmarshalBinary(jraw))
	require.Equal(t, jfr.Descriptor(), jd)
	_, err = jetty.ImportJFR(t.Context(), e.a, jd, 0)
	require.NoError(t, err)
}

func testImportUnknown(t *testing.T, e *env) {
	s := e.seg(e.b, 64, segment.Read)
	d := s.Descriptor()
	d.UASID += 1000
	_, err := segment.Import(t.Context(), e.a, d, 0)
	require.ErrorIs(t, err, urma.ErrNotFound, "unknown address space")
	// A token id no segment has: depending on how a provider names its
	// segments this is an unknown segment or a descriptor that does not
	// match one, but never a success.
	d = s.Descriptor()
	d.TokenID += 1000
	_, err = segment.Import(t.Context(), e.a, d, 0)
	if !errors.Is(err, urma.ErrNotFound) {
		require.ErrorIs(t, err, urma.ErrInvalid)
	}
	// A segment that was registered and is gone.
	gone := e.seg(e.b, 64, segment.Read)
	gd := gone.Descriptor()
	require.NoError(t, gone.Unregister())
	_, err = segment.Import(t.Context(), e.a, gd, 0)
	require.ErrorIs(t, err, urma.ErrNotFound, "unregistered segment")
	d = s.Descriptor()
	d.Len *= 2
	_, err = segment.Import(t.Context(), e.a, d, 0)
	require.ErrorIs(t, err, urma.ErrInvalid)
	d = s.Descriptor()
	d.Access = rwa
	_, err = segment.Import(t.Context(), e.a, d, 0)
	require.ErrorIs(t, err, urma.ErrInvalid, "a descriptor cannot widen access")
	jd := e.receiver(jetty.JFRConfig{}).jfr.Descriptor()
	jd.ID.ID += 1000
	_, err = jetty.ImportJFR(t.Context(), e.a, jd, 0)
	require.ErrorIs(t, err, urma.ErrNotFound)
}

func testSharedTokenID(t *testing.T, e *env) {
	tok, err := segment.AllocTokenID(e.b)
	require.NoError(t, err)
	cfg := segment.Config{Access: segment.Read, TokenID: tok, TokenPolicy: segment.TokenPlainText, Token: 3}
	s1, err := segment.Alloc(e.b, 64, cfg)
	require.NoError(t, err)
	s2, err := segment.Alloc(e.b, 64, cfg)
	require.NoError(t, err)
	require.Equal(t, tok.ID(), s1.Descriptor().TokenID)
	require.Equal(t, tok.ID(), s2.Descriptor().TokenID)
	t2, err := segment.Import(t.Context(), e.a, s2.Descriptor(), 3)
	require.NoError(t, err)
	require.Equal(t, s2.VA(), t2.Descriptor().VA)
	require.ErrorIs(t, tok.Free(), urma.ErrBusy)
	require.NoError(t, s1.Unregister())
	require.NoError(t, s2.Unregister())
	require.NoError(t, tok.Free())
	require.NoError(t, tok.Free(), "free is idempotent")
	_, err = segment.Alloc(e.b, 64, cfg)
	require.ErrorIs(t, err, urma.ErrClosed, "freed token id")
}

func testRegister(t *testing.T, e *env) {
	buf := e.callerBuf(e.b, 256)
	s, err := segment.Register(e.b, buf, segment.Config{Access: rwa})
	require.NoError(t, err)
	tg, err := segment.Import(t.Context(), e.a, s.Descriptor(), 0)
	require.NoError(t, err)
	snd := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	copy(l.Bytes(), "caller memory")
	require.NoError(t, snd.jfs.Write(r.remote, tg.SGE(16, 13), l.SGE(0, 13), 0, 1))
	e.pollOK(snd.jfc)
	require.Equal(t, "caller memory", string(buf[16:29]))
}
