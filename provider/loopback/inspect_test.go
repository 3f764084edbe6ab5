package loopback

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

// Inspect applies Open's checks to an existing directory: a directory
// others can enter, or a symlink, is refused rather than listed; a missing
// one holds no contexts.
func TestInspectChecksTheDirectory(t *testing.T) {
	_, err := Inspect("relative", time.Second)
	require.ErrorIs(t, err, provider.ErrInvalid)
	require.ErrorContains(t, err, "must be absolute")

	base := t.TempDir()
	got, err := Inspect(filepath.Join(base, "missing"), time.Second)
	require.NoError(t, err)
	require.Empty(t, got)

	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o700))
	require.NoError(t, os.Chmod(open, 0o755))
	_, err = Inspect(open, time.Second)
	require.ErrorIs(t, err, provider.ErrPermission)
	require.ErrorContains(t, err, "has mode 0755")

	private := filepath.Join(base, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(private, link))
	_, err = Inspect(link, time.Second)
	require.ErrorIs(t, err, provider.ErrPermission)
	require.ErrorContains(t, err, "is not a directory")

	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(private, 65534, 65534))
		_, err = Inspect(private, time.Second)
		require.ErrorIs(t, err, provider.ErrPermission)
		require.ErrorContains(t, err, "belongs to uid 65534")
	}
}
