package rdmanl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// recvSize holds the largest message a dump sends: the kernel fills
// dump messages up to 32 KiB.
const recvSize = 64 << 10

// Conn is a socket on the kernel's RDMA netlink. It is not safe for
// concurrent use.
type Conn struct {
	f      *os.File
	rc     syscall.RawConn
	seq    uint32
	buf    []byte
	closed sync.Once
	// tap, when set, sees every buffer the kernel returns (tests record
	// real replies with it).
	tap func([]byte)
}

// socket opens the netlink socket; a variable so that tests can stand in
// for a kernel without RDMA netlink.
var socket = func() (int, error) {
	return unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_RDMA)
}

// Dial opens a socket on the kernel's RDMA netlink. On a kernel without
// it (ib_core is not loaded, or the kernel has no InfiniBand support) the
// error matches provider.ErrNotSupported.
func Dial() (*Conn, error) {
	fd, err := socket()
	if err != nil {
		if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EAFNOSUPPORT) {
			return nil, provider.Errorf(provider.ErrNotSupported,
				"rdmanl: this kernel has no RDMA netlink (socket NETLINK_RDMA: %v): load ib_core (modprobe ib_core) or use a kernel with InfiniBand support", err)
		}
		return nil, fmt.Errorf("rdmanl: socket NETLINK_RDMA: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("rdmanl: bind NETLINK_RDMA: %w", err)
	}
	return newConn(fd)
}

// newConn wraps a non-blocking socket. Such a descriptor gives a File on
// the runtime's poller, so that reads honour deadlines.
func newConn(fd int) (*Conn, error) {
	f := os.NewFile(uintptr(fd), "netlink-rdma")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("rdmanl: %w", err)
	}
	return &Conn{f: f, rc: rc, buf: make([]byte, recvSize)}, nil
}

// Close closes the socket. It is idempotent and nil-safe.
func (c *Conn) Close() error {
	if c == nil {
		return nil
	}
	var err error
	c.closed.Do(func() { err = c.f.Close() })
	return err
}

// Devices lists the RDMA devices of the kernel.
func (c *Conn) Devices(ctx context.Context) ([]Device, error) {
	var devs []Device
	err := c.dump(ctx, cmdGet, 0, false, func(p []byte) error {
		var err error
		devs, err = DecodeDevices(devs, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("rdmanl: list devices: %w", err)
	}
	return devs, nil
}

// ErrNoDevice is returned by DeviceByName for a name the kernel does not
// know.
var ErrNoDevice = errors.New("rdmanl: no such RDMA device")

// DeviceByName returns the device called name. An unknown name is an
// error matching ErrNoDevice that lists the devices there are.
func (c *Conn) DeviceByName(ctx context.Context, name string) (Device, error) {
	devs, err := c.Devices(ctx)
	if err != nil {
		return Device{}, err
	}
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	if len(names) == 0 {
		return Device{}, fmt.Errorf("%w %q: the kernel has no RDMA devices", ErrNoDevice, name)
	}
	return Device{}, fmt.Errorf("%w %q (the kernel has %v)", ErrNoDevice, name, names)
}

// QPs lists the queue pairs of dev.
func (c *Conn) QPs(ctx context.Context, dev Device) ([]QP, error) {
	qps := []QP{}
	err := c.dump(ctx, cmdResQPGet, dev.Index, true, func(p []byte) error {
		var err error
		qps, err = DecodeQPs(qps, p)
		return err
	})
	for i := range qps {
		qps[i].Process = processOf(qps[i].PID)
	}
	return qps, resErr("QPs", dev, err)
}

// CQs lists the completion queues of dev.
func (c *Conn) CQs(ctx context.Context, dev Device) ([]CQ, error) {
	cqs := []CQ{}
	err := c.dump(ctx, cmdResCQGet, dev.Index, true, func(p []byte) error {
		var err error
		cqs, err = DecodeCQs(cqs, p)
		return err
	})
	for i := range cqs {
		cqs[i].Process = processOf(cqs[i].PID)
	}
	return cqs, resErr("CQs", dev, err)
}

// MRs lists the memory regions of dev.
func (c *Conn) MRs(ctx context.Context, dev Device) ([]MR, error) {
	mrs := []MR{}
	err := c.dump(ctx, cmdResMRGet, dev.Index, true, func(p []byte) error {
		var err error
		mrs, err = DecodeMRs(mrs, p)
		return err
	})
	for i := range mrs {
		mrs[i].Process = processOf(mrs[i].PID)
	}
	return mrs, resErr("MRs", dev, err)
}

// SRQs lists the shared receive queues of dev. A kernel that cannot list
// them (older kernels) gives an error matching
// provider.ErrNotSupported.
func (c *Conn) SRQs(ctx context.Context, dev Device) ([]SRQ, error) {
	srqs := []SRQ{}
	err := c.dump(ctx, cmdResSRQ, dev.Index, true, func(p []byte) error {
		var err error
		srqs, err = DecodeSRQs(srqs, p)
		return err
	})
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
		return nil, provider.Errorf(provider.ErrNotSupported, "rdmanl: this kernel does not list SRQs (%v)", err)
	}
	for i := range srqs {
		srqs[i].Process = processOf(srqs[i].PID)
	}
	return srqs, resErr("SRQs", dev, err)
}

func resErr(what string, dev Device, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rdmanl: list the %s of %s: %w", what, dev.Name, err)
}

// dump sends a dump request for cmd and passes the payload of every reply
// message to fn, until the kernel ends the dump or ctx is done.
func (c *Conn) dump(ctx context.Context, cmd uint16, dev uint32, hasDev bool, fn func([]byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// A cancel makes the pending read return at once. Once the cancel has
	// begun, it is waited for, so that its deadline cannot land on the
	// next dump.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = c.f.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired
		}
	}()
	if d, ok := ctx.Deadline(); ok {
		if err := c.f.SetReadDeadline(d); err != nil {
			return err
		}
	} else if err := c.f.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	c.seq++
	req := request(cmd, c.seq, dev, hasDev)
	var serr error
	if err := c.rc.Write(func(fd uintptr) bool {
		// An unaddressed write on a netlink socket goes to the kernel.
		_, serr = unix.Write(int(fd), req)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	for {
		var n, rflags int
		var rerr error
		if err := c.rc.Read(func(fd uintptr) bool {
			n, _, rflags, _, rerr = unix.Recvmsg(int(fd), c.buf, nil, 0)
			return rerr != unix.EAGAIN
		}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return context.DeadlineExceeded
			}
			return err
		}
		if rerr != nil {
			return rerr
		}
		if rflags&unix.MSG_TRUNC != 0 {
			return fmt.Errorf("%w: a reply longer than %d bytes", ErrMalformed, len(c.buf))
		}
		if c.tap != nil {
			c.tap(c.buf[:n])
		}
		payloads, done, err := Messages(c.buf[:n], c.seq, msgType(cmd))
		for _, p := range payloads {
			if ferr := fn(p); ferr != nil {
				return ferr
			}
		}
		if err != nil || done {
			return err
		}
	}
}
