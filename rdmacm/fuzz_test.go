package rdmacm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urma"
)

// FuzzParseAddr: addresses come from command lines and option strings
// (krping's addr= and port=). What parseAddr accepts must print as an
// address it parses back the same; a listener accepts everything a dialer
// does, and a dialer never gets port 0.
func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"169.254.77.1:7174", "[fe80::1]:9", ":0", "10.0.0.1:0", "169.254.77.1",
		"10.0.0.1:70000", ":7174", "localhost:7174", "[fe80::1%eth0]:1", "[::ffff:1.2.3.4]:0080", "[1.2.3.4]:5",
		"1.2.3.4:+5", "[]:1", "::1:2"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, listen bool) {
		ap, err := parseAddr(s, listen)
		if err != nil {
			require.ErrorIs(t, err, urma.ErrInvalid)
			return
		}
		require.True(t, ap.IsValid())
		if !listen {
			require.NotZero(t, ap.Port())
			l, err := parseAddr(s, true)
			require.NoError(t, err, "a listener must accept what a dialer does")
			require.Equal(t, ap, l)
		}
		again, err := parseAddr(ap.String(), listen)
		require.NoError(t, err, "%q reads as %v", s, ap)
		require.Equal(t, ap, again)
	})
}
