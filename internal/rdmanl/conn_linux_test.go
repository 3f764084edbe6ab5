package rdmanl

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// noNetlinkText is what a user reads on a kernel without RDMA netlink.
const noNetlinkText = "rdmanl: this kernel has no RDMA netlink (socket NETLINK_RDMA: protocol not supported): " +
	"load ib_core (modprobe ib_core) or use a kernel with InfiniBand support: not supported"

// TestDialWithoutRDMANetlink: a kernel that does not know NETLINK_RDMA
// refuses the socket with EPROTONOSUPPORT; Dial says what is missing.
func TestDialWithoutRDMANetlink(t *testing.T) {
	real := socket
	t.Cleanup(func() { socket = real })
	socket = func() (int, error) { return -1, unix.EPROTONOSUPPORT }
	c, err := Dial()
	require.Nil(t, c)
	require.ErrorIs(t, err, provider.ErrNotSupported)
	assert.EqualError(t, err, noNetlinkText)

	socket = func() (int, error) { return -1, unix.EMFILE }
	_, err = Dial()
	require.ErrorIs(t, err, unix.EMFILE)
	assert.NotErrorIs(t, err, provider.ErrNotSupported)
}

// TestDialHost: on this machine's kernel Dial either works, and then the
// device list answers, or fails with the message above.
func TestDialHost(t *testing.T) {
	c, err := Dial()
	if err != nil {
		require.ErrorIs(t, err, provider.ErrNotSupported)
		assert.EqualError(t, err, noNetlinkText)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	devs, err := c.Devices(ctx)
	require.NoError(t, err)
	_, err = c.DeviceByName(ctx, "no-such-device")
	require.ErrorIs(t, err, ErrNoDevice)
	for _, d := range devs {
		assert.Contains(t, err.Error(), d.Name)
	}
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	var nilConn *Conn
	require.NoError(t, nilConn.Close())
}

// TestDumpCancel: a cancelled context ends a dump at once, before it is
// sent, and a socket that never answers (here one nobody writes to) ends
// at the deadline.
func TestDumpCancel(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fds[1])
	c, err := newConn(fds[0])
	require.NoError(t, err)
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Devices(ctx)
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Devices(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = c.Devices(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, context.DeadlineExceeded))
}
