package loopback

import (
	"fmt"
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
// It is created with mode 0700 on first use and refused if another user owns
// it or can enter it.
func RuntimeDir() string {
	if d := os.Getenv(EnvRuntimeDir); d != "" {
		return d
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "urma-loopback")
	}
	base := "/dev/shm"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	return filepath.Join(base, fmt.Sprintf("urma-loopback-%d", os.Geteuid()))
}

// ensureDir creates dir if needed and checks that only this user can use it:
// a directory that is a symlink, belongs to someone else or is open to group
// or others could let a stranger read segment descriptors or stand in for
// a context.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return provider.Errorf(provider.ErrPermission, "loopback runtime directory %s: %v (set %s to another directory)", dir, err, EnvRuntimeDir)
	}
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
	sweep(dir)
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
