package loopback

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// EnvRuntimeDir names the environment variable that overrides the runtime
// directory, where every loopback context of the host keeps its control
// socket. Processes that want to reach each other must agree on it.
const EnvRuntimeDir = "URMA_LOOPBACK_DIR"

// RuntimeDir returns the runtime directory this process uses: $URMA_LOOPBACK_DIR
// if set, else $XDG_RUNTIME_DIR/urma-loopback, else /dev/shm/urma-loopback-UID.
// Open creates it with mode 0700 on first use, and refuses it if it is
// relative, not a directory, owned by another user or open to others.
// $XDG_RUNTIME_DIR itself is never created: it belongs to the login
// session, and a missing one is an error rather than a fresh directory.
func RuntimeDir() string {
	if d := os.Getenv(EnvRuntimeDir); d != "" {
		return d
	}
	if d := os.Getenv(envXDGRuntimeDir); d != "" {
		return filepath.Join(d, "urma-loopback")
	}
	base := "/dev/shm"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	return filepath.Join(base, fmt.Sprintf("urma-loopback-%d", os.Geteuid()))
}

// envXDGRuntimeDir is the login session's private directory (XDG Base
// Directory specification), which the session manager creates and removes.
const envXDGRuntimeDir = "XDG_RUNTIME_DIR"

// ensureDir creates dir if needed and checks that only this user can use it
// (see checkDir), then sweeps what dead contexts left in it.
func ensureDir(dir string) error {
	if err := checkAbs(dir); err != nil {
		return err
	}
	if err := makeDir(dir); err != nil {
		return err
	}
	if err := checkDir(dir); err != nil {
		return err
	}
	sweep(dir)
	return nil
}

// checkAbs refuses a relative runtime directory: every process would
// resolve it against its own working directory, so processes meant to
// reach each other would each use a directory of their own, and a context
// would listen wherever its process happened to start.
func checkAbs(dir string) error {
	if !filepath.IsAbs(dir) {
		return provider.Errorf(provider.ErrInvalid, "loopback runtime directory %q is relative; it must be absolute (set %s to an absolute path)", dir, EnvRuntimeDir)
	}
	return nil
}

// makeDir creates dir with mode 0700, and its missing parents too unless
// the parent is $XDG_RUNTIME_DIR: that directory belongs to the login
// session, which creates it (mode 0700, owned by the user) and removes it
// at logout, so a missing one means the variable is stale, and a
// directory made in its place would have neither its owner nor its
// lifetime.
func makeDir(dir string) error {
	if xdg := os.Getenv(envXDGRuntimeDir); xdg != "" && filepath.Dir(dir) == filepath.Clean(xdg) {
		err := os.Mkdir(dir, 0o700)
		switch {
		case err == nil || errors.Is(err, fs.ErrExist):
			return nil
		case errors.Is(err, fs.ErrNotExist):
			return provider.Errorf(provider.ErrNotFound, "loopback runtime directory %s: %s=%s does not exist (a stale variable of an ended login session?); unset it or set %s",
				dir, envXDGRuntimeDir, xdg, EnvRuntimeDir)
		}
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s: %v (set %s to another directory)", dir, err, EnvRuntimeDir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s: %v (set %s to another directory)", dir, err, EnvRuntimeDir)
	}
	return nil
}

// checkDir checks that only this user can use the existing directory dir:
// one that is a symlink, belongs to someone else or is open to group or
// others could let a stranger read segment descriptors or stand in for a
// context.
func checkDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s: %v", dir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s is not a directory (a symlink?)", dir)
	case int(st.Uid) != os.Geteuid():
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s belongs to uid %d, not to this user (%d); set %s", dir, st.Uid, os.Geteuid(), EnvRuntimeDir)
	case st.Mode&0o077 != 0:
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s has mode %#o; it must be 0700 so that other users cannot reach its contexts", dir, st.Mode&0o777)
	}
	return nil
}

const sockSuffix = ".sock"

// sockName is the socket file name of the context at eid and uasid.
func sockName(eid provider.EID, uasid uint32) string {
	a := netip.AddrFrom16(eid).Unmap()
	return fmt.Sprintf("%s-%08x%s", strings.ReplaceAll(a.String(), ":", "_"), uasid, sockSuffix)
}

// sweep removes the sockets of contexts whose process died without
// cleaning up. A killed process cannot remove its own socket, and a peer
// that never connected to it does not notice it die, so every context
// sweeps when it opens and when it closes: what a crash leaves lasts only
// until the next context of any process comes or goes.
//
// A socket the kernel lists as listening is left alone without a probe:
// a probe is a connection the context must accept and serve, and with
// every context of every process sweeping, the probes would grow with the
// square of the contexts open on the host.
func sweep(dir string) {
	live := listening(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		switch name := e.Name(); {
		case strings.HasSuffix(name, sockSuffix):
			if !live[name] {
				removeIfStale(filepath.Join(dir, name))
			}
		case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp"):
			// ".PID-name.tmp": a context that died between bind and link.
			var pid int
			if _, err := fmt.Sscanf(name, ".%d-", &pid); err == nil && pid > 0 && !processAlive(pid) {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}

// removeIfStale removes a socket file nobody listens on any more. Sockets
// appear under their final name only once they listen (see listen), so a
// refused connection means the context is gone.
func removeIfStale(path string) bool {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err == unix.ECONNREFUSED {
		return os.Remove(path) == nil
	}
	return false
}

// listening returns the names of the sockets in dir that a context listens
// on, as /proc/net/unix lists them (none where it cannot be read). A
// context binds its socket as ".PID-NAME.tmp" and links it as NAME (see
// listen), and the kernel lists a socket under the path it was bound to.
// A name missing here is only probed: the list may be older than the
// directory, or name the directory differently.
func listening(dir string) map[string]bool {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	prefix := dir + "/."
	live := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		// Num RefCount Protocol Flags Type St Inode Path; the flag
		// __SO_ACCEPTCON (0x10000) marks a listening socket.
		f := strings.Fields(line)
		if len(f) < 8 || f[3] != "00010000" {
			continue
		}
		rest, ok := strings.CutPrefix(strings.Join(f[7:], " "), prefix)
		if !ok {
			continue
		}
		_, name, ok := strings.Cut(rest, "-") // past the PID
		if name, ok2 := strings.CutSuffix(name, ".tmp"); ok && ok2 && strings.HasSuffix(name, sockSuffix) {
			live[name] = true
		}
	}
	return live
}

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
