package loopback_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// segMaps counts this process's mappings of segment memfds with the
// permissions perms ("rw-s", "r--s").
func segMaps(t *testing.T, perms string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[1] == perms && strings.Contains(l, "urma-seg") {
			n++
		}
	}
	return n
}

// A segment of another process, mapped: both sides see each other's
// stores, and a WRITE through the import lands in the mapping.
func TestXProcMapReadWrite(t *testing.T) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 8192, segment.Config{Access: segment.Read | segment.Write, TokenPolicy: segment.TokenPlainText, Token: 0x77})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0x77)
	require.NoError(t, err)
	defer tgt.Unimport()
	before := segMaps(t, "rw-s")
	m, err := tgt.Map(context.Background(), segment.Read|segment.Write)
	require.NoError(t, err)
	require.Equal(t, before+1, segMaps(t, "rw-s"))
	b, err := m.Bytes()
	require.NoError(t, err)

	copy(seg.Bytes(), "the owner's bytes") // the peer's memory itself
	require.Equal(t, "the owner's bytes", string(b[:17]))
	copy(b[4000:], "the importer's bytes")
	require.Equal(t, "the importer's bytes", string(seg.Bytes()[4000:4020]))

	_, _, rem := x.peerJFR(t, 4)
	local, err := segment.Alloc(x.a, 64, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	defer local.Unregister()
	copy(local.Bytes(), "written by a WRITE")
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
	require.NoError(t, jfs.Write(rem, tgt.SGE(6000, 18), local.SGE(0, 18), 0, 1))
	cr := pollN(t, jfc, 1, 5*time.Second)[0]
	require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	got := make([]byte, 18)
	_, err = m.ReadAt(got, 6000)
	require.NoError(t, err)
	require.Equal(t, "written by a WRITE", string(got))

	mapped := segMaps(t, "rw-s")
	require.NoError(t, m.Unmap())
	require.Equal(t, mapped-1, segMaps(t, "rw-s"), "Unmap unmaps")
	_, err = m.ReadAt(got, 0)
	require.ErrorIs(t, err, net.ErrClosed)
}

// A READ-only grant of another process: the owner sends a memfd open for
// reading only, mapped PROT_READ; nothing hands out a slice, and asking
// the provider itself for a writable mapping is refused.
func TestXProcMapReadOnly(t *testing.T) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.Read})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	defer tgt.Unimport()
	_, err = tgt.Map(context.Background(), segment.Read|segment.Write)
	require.ErrorIs(t, err, urma.ErrPermission)
	_, err = tgt.Raw().(provider.TargetMapper).MapTarget(context.Background(), true)
	require.ErrorIs(t, err, urma.ErrPermission, "the provider refuses too")

	before := segMaps(t, "r--s")
	m, err := tgt.Map(context.Background(), segment.Read)
	require.NoError(t, err)
	defer m.Unmap()
	require.Equal(t, before+1, segMaps(t, "r--s"), "mapped PROT_READ")
	copy(seg.Bytes()[8:], []byte{1, 0, 0, 0, 0, 0, 0, 0})
	v, err := m.LoadUint64(8)
	require.NoError(t, err)
	require.Equal(t, uint64(1), v)
	_, err = m.Bytes()
	require.ErrorIs(t, err, urma.ErrPermission)
}

// Caller memory of another process is reached by copying: it cannot be
// mapped.
func TestXProcMapCallerMemory(t *testing.T) {
	x := newXProc(t)
	buf, err := x.peer.CallerMemory(4096)
	require.NoError(t, err)
	seg, err := segment.Register(x.b, buf, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), x.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	defer tgt.Unimport()
	_, err = tgt.Map(context.Background(), segment.Read)
	require.ErrorIs(t, err, urma.ErrNotSupported)
	require.Contains(t, err.Error(), "AllocSegment")
}

// When the owner unregisters, or its process dies, a mapping stays
// memory: it keeps the last values and takes stores without a fault
// until Unmap. A new Map fails.
func TestXProcMapOwnerGone(t *testing.T) {
	x := newXProc(t)
	keep, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	gone, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tKeep, err := segment.Import(context.Background(), x.a, keep.Descriptor(), 0)
	require.NoError(t, err)
	defer tKeep.Unimport()
	tGone, err := segment.Import(context.Background(), x.a, gone.Descriptor(), 0)
	require.NoError(t, err)
	defer tGone.Unimport()
	mKeep, err := tKeep.Map(context.Background(), segment.Read|segment.Write)
	require.NoError(t, err)
	mGone, err := tGone.Map(context.Background(), segment.Read)
	require.NoError(t, err)

	copy(gone.Bytes(), "unregistered")
	require.NoError(t, gone.Unregister())
	_, err = tGone.Map(context.Background(), segment.Read)
	require.ErrorIs(t, err, urma.ErrNotFound)
	got := make([]byte, 12)
	_, err = mGone.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, "unregistered", string(got))

	copy(keep.Bytes(), "before the kill")
	require.NoError(t, x.peer.Process().Kill())
	waitDead(t, x.peer.Pid())
	b, err := mKeep.Bytes()
	require.NoError(t, err)
	require.Equal(t, "before the kill", string(b[:15]))
	copy(b, "after the kill")
	require.Equal(t, "after the kill", string(b[:14]))
	_, err = tKeep.Map(context.Background(), segment.Read)
	require.Error(t, err, "no owner to ask")
	require.NoError(t, mKeep.Unmap())
	require.NoError(t, mGone.Unmap())
}

// waitDead waits until process pid has exited (a zombie, or reaped).
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d did not exit", pid)
}
