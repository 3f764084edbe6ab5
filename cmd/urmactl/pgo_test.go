package main

import (
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBuiltWithProfile checks that go build builds urmactl with its
// profile (default.pgo, made by bench/pgo-profile) and that the profile
// covers the loopback provider's hot paths, which it exists to optimize: a
// profile of something else would build fine and optimize nothing.
func TestBuiltWithProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	info, err := buildinfo.ReadFile(urmactl(t))
	require.NoError(t, err)
	pgo := ""
	for _, s := range info.Settings {
		if s.Key == "-pgo" {
			pgo = s.Value
		}
	}
	want, err := filepath.Abs("default.pgo")
	require.NoError(t, err)
	require.Equal(t, want, pgo, "the binary's -pgo build setting")

	f, err := os.Open("default.pgo")
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err, "a CPU profile is gzipped protobuf")
	raw, err := io.ReadAll(z)
	require.NoError(t, err)
	for _, fn := range []string{
		"jetty.(*Prepared).Post",
		"jetty.(*JFC).Poll",
		"provider/loopback.(*prepared).Post",
		"provider/loopback.(*jfc).Poll",
		"provider/loopback.(*rqView).deliverLocked",
		"provider/loopback.(*preparedRecv).Post",
	} {
		require.True(t, bytes.Contains(raw, []byte("github.com/urma-go/sdk/"+fn)), "the profile has no samples of %s", fn)
	}
}
