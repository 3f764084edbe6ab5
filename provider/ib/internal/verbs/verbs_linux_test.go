//go:build linux && cgo && urma_verbs

package verbs

import (
	"bytes"
	"net/netip"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/test/vm"
)

func TestDevicesInGuest(t *testing.T) {
	env := vm.Require(t)
	infos, err := Devices()
	require.NoError(t, err)
	byName := map[string]DeviceInfo{}
	for _, d := range infos {
		byName[d.Name] = d
		t.Logf("%s: transport %d guid %#x ports %+v", d.Name, d.Attr.Transport, d.Attr.NodeGUID, d.Ports)
		for _, g := range d.GIDs {
			t.Logf("  gid %d port %d type %d if %d %v", g.Index, g.Port, g.Type, g.Ifindex, netip.AddrFrom16(g.Raw))
		}
		t.Logf("  attr %+v", d.Attr)
	}
	for _, d := range env.Devices() {
		info, ok := byName[d.Name]
		require.True(t, ok, "device %s missing", d.Name)
		require.Equal(t, PortActive, info.Ports[0].State)
	}
	require.Equal(t, TransportIWARP, byName[env.SIW.Name].Attr.Transport)
	require.Equal(t, TransportIB, byName[env.RXE.Name].Attr.Transport)
}

// TestSigCapsSoftDevices runs the mlx5 capability query on the guest's
// software devices: neither is an mlx5 device, so it reports no offload
// without failing (and mlx5dv_is_supported is exercised for real).
func TestSigCapsSoftDevices(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		c, err := Open(d.Name)
		require.NoError(t, err)
		caps, err := c.QuerySigCaps()
		require.NoError(t, c.Close())
		require.NoError(t, err, d.Name)
		require.Equal(t, SigCaps{}, caps, d.Name)
	}
}

// TestMkeyRefusedOnSoftDevices calls the mlx5 offload's constructors on the
// software devices: libmlx5 refuses them with an errno, not a crash, which
// is all of the offload that can run without an mlx5 device.
func TestMkeyRefusedOnSoftDevices(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		c, err := Open(d.Name)
		require.NoError(t, err)
		cq, err := c.NewCQ(16, nil, 0)
		require.NoError(t, err)
		qp, err := c.MkeyQP(cq, 16, 1)
		require.Error(t, err, d.Name)
		require.Nil(t, qp)
		var errno syscall.Errno
		require.ErrorAs(t, err, &errno)
		t.Logf("%s: %v", d.Name, err)
		k, err := c.NewSigMkey(4)
		require.Error(t, err, d.Name)
		require.Nil(t, k)
		t.Logf("%s: %v", d.Name, err)
		_, err = c.NewSigMkey(0)
		require.ErrorIs(t, err, syscall.EINVAL)
		require.NoError(t, cq.Destroy())
		require.NoError(t, c.Close())
	}
}

func waitCM(t *testing.T, ch *EventChannel, w *Waiter, want int) CMEvent {
	t.Helper()
	var ev CMEvent
	err := w.Wait(time.Now().Add(10*time.Second), func() bool {
		e, ok, err := ch.GetEvent()
		require.NoError(t, err)
		ev = e
		return ok
	})
	require.NoError(t, err, "waiting for %s", CMEventName(want))
	require.Equal(t, CMEventName(want), CMEventName(ev.Type), "status %d", ev.Status)
	return ev
}

func pollOne(t *testing.T, cq *CQ) WC {
	t.Helper()
	wc := make([]WC, 1)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, err := cq.Poll(wc)
		require.NoError(t, err)
		if n == 1 {
			return wc[0]
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Fatal("no completion")
	return WC{}
}

func mmap(t *testing.T, n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

// TestConnectRejectWrite checks on each device what the provider relies on:
// private data in a connect request reaches the listener and private data
// in a reject comes back; an accepted connection attached to an SRQ moves a
// WRITE and a SEND; a zero-length WRITE with no key completes.
func TestConnectRejectWrite(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) { connectRejectWrite(t, env, d) })
	}
}

func connectRejectWrite(t *testing.T, env vm.Env, d vm.Device) {
	ctx, err := Open(d.Name)
	require.NoError(t, err)
	defer ctx.Close()
	inl, err := ctx.ProbeMaxInline(1024)
	require.NoError(t, err)
	t.Logf("max inline %d", inl)

	ch, err := NewEventChannel()
	require.NoError(t, err)
	defer ch.Destroy()
	w, err := NewWaiter(ch.FD(), "cm")
	require.NoError(t, err)
	defer w.Close()

	lid, err := ch.NewID()
	require.NoError(t, err)
	defer lid.Destroy()
	addr := netip.AddrFrom16(d.Addr.As16())
	require.NoError(t, lid.Bind(addr, 0, 0))
	require.NoError(t, lid.Listen(8))
	port := lid.SrcPort()
	require.NotZero(t, port)

	connect := func(pdata []byte, cq *CQ) (CMID, *QP) {
		id, err := ch.NewID()
		require.NoError(t, err)
		require.NoError(t, id.ResolveAddr(addr, 0, addr, port, 0, 2000))
		waitCM(t, ch, w, CMAddrResolved)
		require.NoError(t, id.ResolveRoute(2000))
		waitCM(t, ch, w, CMRouteResolved)
		require.True(t, id.OnContext(ctx))
		qp, err := id.CreateQP(ctx, cq, cq, nil, QPCaps{MaxSendWR: 8, MaxSendSGE: 1, MaxInline: 0, MaxRecvWR: 1})
		require.NoError(t, err)
		require.NoError(t, id.Connect(pdata, 7, 7, 1))
		return id, qp
	}

	cqA, err := ctx.NewCQ(16, nil, 1)
	require.NoError(t, err)
	defer cqA.Destroy()
	cqB, err := ctx.NewCQ(16, nil, 2)
	require.NoError(t, err)
	defer cqB.Destroy()
	srq, err := ctx.NewSRQ(8, 1, 3)
	require.NoError(t, err)
	defer srq.Destroy()

	// Reject with private data.
	id1, _ := connect([]byte("import seg 7 token 42"), cqA)
	req := waitCM(t, ch, w, CMConnectRequest)
	require.True(t, bytes.HasPrefix(req.PrivateData, []byte("import seg 7 token 42")), "%q", req.PrivateData)
	require.NoError(t, req.ID.Reject([]byte("rkey=1234")))
	rej := waitCM(t, ch, w, CMRejected)
	require.True(t, bytes.HasPrefix(rej.PrivateData, []byte("rkey=1234")), "reject data %q", rej.PrivateData)
	id1.DestroyQP()
	require.NoError(t, id1.Destroy())
	require.NoError(t, req.ID.Destroy())

	// Accept onto an SRQ, then WRITE, SEND and a zero-length WRITE.
	id2, qpA := connect([]byte("connect jfr 1"), cqA)
	req = waitCM(t, ch, w, CMConnectRequest)
	qpB, err := req.ID.CreateQP(ctx, cqB, cqB, srq, QPCaps{MaxSendWR: 1, MaxSendSGE: 1})
	require.NoError(t, err)
	require.NoError(t, req.ID.Accept([]byte("ok"), 1, 7))
	est1 := waitCM(t, ch, w, CMEstablished)
	est2 := waitCM(t, ch, w, CMEstablished)
	t.Logf("established %v %v, qp %d <-> %d", est1.ID == id2, est2.ID == req.ID, qpA.Num, qpB.Num)

	mem := mmap(t, 8192)
	mr, err := ctx.RegMR(unsafe.Pointer(&mem[0]), 8192, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead)
	require.NoError(t, err)
	defer mr.Dereg()
	copy(mem, "hello verbs")
	sges := make([]SGE, 2)
	sges[0].Set(uint64(uintptr(unsafe.Pointer(&mem[0]))), 11, mr.LKey)
	wrs := make([]SendWR, 2)
	wrs[0].Set(1, WRWrite, SendSignaled, 0, 1)
	wrs[0].SetRemote(uint64(uintptr(unsafe.Pointer(&mem[4096]))), mr.RKey)
	wrs[1].Set(2, WRWrite, SendSignaled, 0, 0) // zero length, no key
	n, err := qpA.PostSend(wrs, sges)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	wc := pollOne(t, cqA)
	require.Equal(t, uint32(WCSuccess), wc.Status(), WCStatusName(wc.Status()))
	require.Equal(t, "hello verbs", string(mem[4096:4107]))
	wc = pollOne(t, cqA)
	require.Equal(t, uint64(2), wc.ID())
	require.Equal(t, uint32(WCSuccess), wc.Status(), "zero-length write: %s", WCStatusName(wc.Status()))

	rsge := make([]SGE, 1)
	rsge[0].Set(uint64(uintptr(unsafe.Pointer(&mem[6000]))), 64, mr.LKey)
	rwr := make([]RecvWR, 1)
	rwr[0].Set(9, 0, 1)
	_, err = srq.PostRecv(rwr, rsge)
	require.NoError(t, err)
	wrs[0].Set(3, WRSend, SendSignaled, 0, 1)
	_, err = qpA.PostSend(wrs[:1], sges)
	require.NoError(t, err)
	wc = pollOne(t, cqA)
	require.Equal(t, uint32(WCSuccess), wc.Status(), WCStatusName(wc.Status()))
	wc = pollOne(t, cqB)
	require.Equal(t, uint32(WCSuccess), wc.Status(), WCStatusName(wc.Status()))
	require.Equal(t, uint64(9), wc.ID())
	require.Equal(t, qpB.Num, wc.QPNum())
	require.Equal(t, uint32(11), wc.Len())
	require.Equal(t, "hello verbs", string(mem[6000:6011]))

	// A list longer than the send queue: the requests that fit are
	// posted and the error says how many (the index comes back packed
	// with the error, see uv_post_result); exactly those complete. Only
	// on rxe, which checks the queue's room as it posts (asked for 8, its
	// queue holds 15). siw can take more requests than its queue holds
	// without an error and then not complete them all, so it has no such
	// case to check; the provider never posts beyond its own depth.
	if d.Name == env.RXE.Name {
		long := make([]SendWR, 32)
		for i := range long {
			long[i].Set(uint64(100+i), WRWrite, SendSignaled, 0, 0) // zero length, no key
		}
		n, err = qpA.PostSend(long, sges)
		require.ErrorIs(t, err, syscall.ENOMEM, "%d of %d posted", n, len(long))
		require.Positive(t, n)
		require.Less(t, n, len(long))
		t.Logf("%d of %d posted on a queue asked for 8", n, len(long))
		for i := range n {
			wc = pollOne(t, cqA)
			require.Equal(t, uint64(100+i), wc.ID())
			require.Equal(t, uint32(WCSuccess), wc.Status(), WCStatusName(wc.Status()))
		}
		time.Sleep(50 * time.Millisecond)
		k, err := cqA.Poll(make([]WC, 4))
		require.NoError(t, err)
		require.Zero(t, k, "completions beyond the %d requests the post reported", n)
	}

	// On IB CM the passive side's DISCONNECTED is a DREQ that only its own
	// rdma_disconnect answers; iWARP needs no answer but accepts one.
	require.NoError(t, id2.Disconnect())
	ev := waitCM(t, ch, w, CMDisconnected)
	if ev.ID == req.ID {
		_ = req.ID.Disconnect()
	}
	waitCM(t, ch, w, CMDisconnected)
	id2.DestroyQP()
	req.ID.DestroyQP()
	require.NoError(t, id2.Destroy())
	require.NoError(t, req.ID.Destroy())
}
