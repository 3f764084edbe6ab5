package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Peer is a peer process started by Start: a copy of the test binary that
// serves URMA calls for this process.
type Peer struct {
	cmd  *exec.Cmd
	c    *client
	name string // the proxy driver's registry name, "remote<n>"

	owners    sync.Map // owner id -> the Owner of a provider config
	nextOwner atomic.Uint64
	nextCall  atomic.Uint64

	mu     sync.Mutex
	closed bool
	devs   []*device
	ctxs   map[*pContext]struct{}
	mems   []localMem

	exited    chan struct{}
	waitErr   error
	closeOnce sync.Once
	closeErr  error
}

// localMem is this process's view of caller memory made by the peer.
type localMem struct {
	id uint64
	m  *mapping
}

// closeGrace is how long Close waits for the peer to exit on its own after
// its connection closed, before killing it.
const closeGrace = shutdownLimit + time.Second

var peers atomic.Int64

// Start re-executes the test binary as a peer and connects to it. The
// peer runs no tests (-test.run=^$); its TestMain must call MaybeServe,
// which serves this process until the connection closes. The peer's
// standard output and error go to this process's standard error.
func Start() (*Peer, error) { return StartIn() }

// StartIn is Start with the peer's command line prefixed by prefix, for
// example "ip", "netns", "exec", "urma-b" to run the peer in another
// network namespace. The prefix must exec the test binary with its file
// descriptors and environment.
func StartIn(prefix ...string) (*Peer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("remote: socketpair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "remote-peer")
	theirs := os.NewFile(uintptr(fds[1]), "remote-peer-child")
	conn, err := net.FileConn(mine)
	_ = mine.Close()
	if err != nil {
		_ = theirs.Close()
		return nil, fmt.Errorf("remote: %w", err)
	}
	args := append(append([]string(nil), prefix...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), envPeer+"=3", peerGORACE()) // ExtraFiles[0] is fd 3
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err = cmd.Start()
	// Only the peer may hold its end: the connection must end when it dies.
	_ = theirs.Close()
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("remote: start peer: %w", err)
	}
	p := &Peer{cmd: cmd, c: newClient(conn, cmd.Process.Pid), ctxs: map[*pContext]struct{}{},
		exited: make(chan struct{})}
	go p.wait()
	if _, err := rpcPing.call(p.c, &empty{}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("remote: peer %d does not answer (does TestMain call remote.MaybeServe first?): %w",
			cmd.Process.Pid, err)
	}
	p.name = fmt.Sprintf("remote%d", peers.Add(1))
	urma.Register(driver{p})
	return p, nil
}

// peerGORACE keeps the caller's race detector options for the peer but
// drops the second the detector sleeps at exit by default: every Close
// would pay it. A race the peer finds still fails its exit status, which
// Close reports.
func peerGORACE() string {
	opts := os.Getenv("GORACE")
	if opts != "" {
		opts += " "
	}
	return "GORACE=" + opts + "atexit_sleep_ms=0"
}

// wait reaps the peer and, if it died on its own, fails the calls still
// waiting for it at once instead of when the socket reports it.
func (p *Peer) wait() {
	p.waitErr = p.cmd.Wait()
	p.c.fail(fmt.Sprintf("remote peer %d: %v", p.Pid(), exitText(p.waitErr)))
	close(p.exited)
}

func exitText(err error) string {
	if err == nil {
		return "exited"
	}
	return err.Error()
}

// Pid is the peer's process id.
func (p *Peer) Pid() int { return p.cmd.Process.Pid }

// Process is the peer process, for tests that signal it (SIGSTOP, SIGCONT,
// SIGKILL).
func (p *Peer) Process() *os.Process { return p.cmd.Process }

// Close ends the peer and waits for it: it closes the connection, which
// makes the peer close its contexts and exit, and kills it if it has not
// exited after a few seconds. Calls still waiting on the peer fail with
// ErrClosed, and the peer's memory mapped in this process (segment Bytes,
// CallerMemory) is unmapped. Close is idempotent and nil-safe; it reports
// a peer that exited with a non-zero status or had to be killed, but not
// one a test killed with a signal.
func (p *Peer) Close() error {
	if p == nil {
		return nil
	}
	p.closeOnce.Do(func() {
		// A stopped peer cannot see its connection close.
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		p.c.fail(fmt.Sprintf("remote peer %d: closed", p.Pid()))
		killed := false
		select {
		case <-p.exited:
		case <-time.After(closeGrace):
			_ = p.cmd.Process.Kill()
			<-p.exited
			killed = true
		}
		p.release()
		var ee *exec.ExitError
		switch {
		case killed:
			p.closeErr = fmt.Errorf("remote: peer %d did not exit within %v of its connection closing; killed it", p.Pid(), closeGrace)
		case errors.As(p.waitErr, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				p.closeErr = fmt.Errorf("remote: peer %d: %w", p.Pid(), p.waitErr)
			}
		case p.waitErr != nil:
			p.closeErr = fmt.Errorf("remote: peer %d: %w", p.Pid(), p.waitErr)
		}
	})
	return p.closeErr
}

// release unmaps everything of the peer this process mapped.
func (p *Peer) release() {
	p.mu.Lock()
	p.closed = true
	ctxs := p.ctxs
	p.ctxs = map[*pContext]struct{}{}
	mems := p.mems
	p.mems = nil
	p.mu.Unlock()
	for c := range ctxs {
		c.release()
	}
	for _, m := range mems {
		m.m.unmap()
	}
}

// Open opens a context on the EID at eidIndex of the peer's device named
// device (urma_create_context in the peer) and returns its proxy: a
// *urma.Context of this process on the proxy device "<remote n>:<device>",
// whose attributes and EIDs are the peer device's.
func (p *Peer) Open(device string, eidIndex int) (*urma.Context, error) {
	d, err := p.device(device)
	if err != nil {
		return nil, &urma.OpError{Op: "open", Obj: "remote device " + device, Err: err}
	}
	devs, err := urma.ProviderDevices(p.name)
	if err != nil {
		return nil, err
	}
	for _, ud := range devs {
		if ud.Name() == d.name {
			return urma.Open(ud, eidIndex, nil)
		}
	}
	return nil, &urma.OpError{Op: "open", Obj: "remote device " + device,
		Err: provider.Errorf(provider.ErrClosed, "the peer is closed")}
}

// device returns the proxy of the peer's device name, asking the peer for
// its attributes the first time.
func (p *Peer) device(name string) (*device, error) {
	if d := p.knownDevice(name); d != nil {
		return d, nil
	}
	r, err := rpcDevice.call(p.c, &deviceArgs{Name: name})
	if err != nil {
		return nil, err
	}
	d := &device{p: p, name: p.name + ":" + name, peerName: name, attr: r.Attr, eids: r.EIDs}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, provider.Errorf(provider.ErrClosed, "the peer is closed")
	}
	for _, x := range p.devs {
		if x.peerName == name {
			return x, nil
		}
	}
	p.devs = append(p.devs, d)
	return d, nil
}

func (p *Peer) knownDevice(name string) *device {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.devs {
		if d.peerName == name {
			return d
		}
	}
	return nil
}

// CallerMemory returns n bytes of memory that contexts of this peer can
// register with segment.Register: the peer creates and maps a memfd, and
// this process maps the same one. It stays valid until the Peer is closed.
func (p *Peer) CallerMemory(n int) ([]byte, error) {
	r, err := rpcCallerMem.call(p.c, &callerMemArgs{N: n})
	if err != nil {
		return nil, err
	}
	m, err := mapPeerFile(p.Pid(), r.File, 0, uint64(n))
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		m.unmap()
		return nil, provider.Errorf(provider.ErrClosed, "the peer is closed")
	}
	p.mems = append(p.mems, localMem{id: r.ID, m: m})
	return m.mem, nil
}

// callerRange finds buf in the caller memory: the peer's id for it, the
// offset of buf, and this process's view of the range.
func (p *Peer) callerRange(buf []byte) (id uint64, off int, view []byte, ok bool) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, lm := range p.mems {
		mem := lm.m.mem
		base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
		if start < base || start-base > uintptr(len(mem)) || uintptr(len(buf)) > uintptr(len(mem))-(start-base) {
			continue
		}
		off = int(start - base)
		return lm.id, off, mem[off : off+len(buf) : off+len(buf)], true
	}
	return 0, 0, nil, false
}

// track and untrack keep the contexts whose mappings Close must undo.
func (p *Peer) track(c *pContext) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.ctxs[c] = struct{}{}
	return true
}

func (p *Peer) untrack(c *pContext) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.ctxs, c)
}

// ownerID gives an Owner a number the peer uses in its place; the number
// comes back in events and JFCE.Wait and is turned back into the Owner.
func (p *Peer) ownerID(v any) uint64 {
	if v == nil {
		return 0
	}
	id := p.nextOwner.Add(1)
	p.owners.Store(id, v)
	return id
}

func (p *Peer) owner(id uint64) any {
	if id == 0 {
		return nil
	}
	v, _ := p.owners.Load(id)
	return v
}

func (p *Peer) dropOwners(ids ...uint64) {
	for _, id := range ids {
		if id != 0 {
			p.owners.Delete(id)
		}
	}
}
