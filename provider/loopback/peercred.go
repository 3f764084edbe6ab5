package loopback

import (
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// ownUID is the uid a context's peers must have: the effective uid of
// this process when the context opens, for which its runtime directory was
// checked. Both ends of a control connection check the other's
// credentials, which the kernel recorded when it connected or listened
// (SO_PEERCRED), so that neither a stranger's process that reaches the
// socket nor a stranger's listener in the socket's place is trusted. A
// variable so that a test can open a context that takes this user for
// another.
var ownUID = os.Geteuid

// peerCred returns the credentials of the process at the other end of
// conn: the connecting process on the owner's side, the listening one on
// the importer's.
func peerCred(conn *net.UnixConn) (*unix.Ucred, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}

// checkPeerUID refuses a peer whose credentials are unknown or whose uid
// is not want; what names the peer in the error.
func checkPeerUID(conn *net.UnixConn, want int, what string) (*unix.Ucred, error) {
	cred, err := peerCred(conn)
	if err != nil {
		return nil, provider.Errorf(provider.ErrPermission, "%s: its credentials are unknown: %v", what, err)
	}
	if int(cred.Uid) != want {
		return nil, provider.Errorf(provider.ErrPermission, "%s belongs to uid %d (pid %d), not to this user (uid %d)", what, cred.Uid, cred.Pid, want)
	}
	return cred, nil
}
