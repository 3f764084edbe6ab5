package loopback

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
)

// ctlServer answers the control requests of importing processes on the
// context's unix socket.
type ctlServer struct {
	c     *lbContext
	ln    *net.UnixListener
	path  string
	mu    sync.Mutex
	conns map[*net.UnixConn]int32 // the importer's pid
	done  bool
	// serving counts connection handlers, so that stop returns only when
	// none can still hand out a descriptor of the closing context.
	serving sync.WaitGroup
}

// listen binds the context's socket. The socket is bound under a temporary
// name and linked to its final name only once it listens, so a sweeper that
// finds a final name without a listener knows its owner is gone; the link
// also fails rather than replace a live context's socket.
func (c *lbContext) listen() error {
	final := filepath.Join(c.dir, sockName(c.eid, c.uasid))
	tmp := filepath.Join(c.dir, fmt.Sprintf(".%d-%s.tmp", os.Getpid(), sockName(c.eid, c.uasid)))
	if len(final) >= len(unix.RawSockaddrUnix{}.Path) {
		return provider.Errorf(provider.ErrInvalid, "loopback socket path %s is too long; set %s to a shorter directory", final, EnvRuntimeDir)
	}
	os.Remove(tmp)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return provider.Errorf(provider.ErrFail, "loopback control socket: %v", err)
	}
	ln.SetUnlinkOnClose(false)
	err = os.Link(tmp, final)
	os.Remove(tmp)
	if err != nil {
		ln.Close()
		if errors.Is(err, os.ErrExist) {
			return provider.Errorf(provider.ErrExist, "loopback socket %s exists", final)
		}
		return provider.Errorf(provider.ErrFail, "loopback control socket: %v", err)
	}
	s := &ctlServer{c: c, ln: ln, path: final, conns: map[*net.UnixConn]int32{}}
	c.srv = s
	go s.accept()
	return nil
}

func (s *ctlServer) accept() {
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = peerPID(conn)
		s.serving.Add(1)
		s.mu.Unlock()
		go s.serve(conn)
	}
}

// anyStopped reports whether a process connected to the context is
// stopped, and so may hold a slot of one of its rings that it will finish.
func (s *ctlServer) anyStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range s.conns {
		if pid > 0 && stopped(pid) {
			return true
		}
	}
	return false
}

// peerPID is the pid of the process at the other end of conn, 0 if
// unknown.
func peerPID(conn *net.UnixConn) int32 {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0
	}
	var pid int32
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = cred.Pid
		}
	})
	return pid
}

// stop tells every importer that the context is closing, then closes the
// socket and removes its file.
func (s *ctlServer) stop() {
	s.mu.Lock()
	s.done = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	os.Remove(s.path)
	s.ln.Close()
	for conn := range conns {
		_ = writeMsg(conn, message{typ: msgBye})
		conn.Close()
	}
	s.serving.Wait()
}

func (s *ctlServer) serve(conn *net.UnixConn) {
	defer func() {
		s.mu.Lock()
		_, mine := s.conns[conn] // false once stop took it: the context is closing
		delete(s.conns, conn)
		s.mu.Unlock()
		conn.Close()
		if mine {
			// The importer may have died midway through one of our rings.
			s.c.scheduleRepair()
		}
		s.serving.Done()
	}()
	for {
		req, err := readMsg(conn)
		if err != nil {
			return
		}
		req.closeFDs() // requests carry none; never keep what a peer slips in
		if req.typ == msgNotify {
			s.notify(req.payload)
			continue
		}
		reply, fds := s.handle(req)
		err = writeMsg(conn, reply)
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err != nil {
			return
		}
	}
}

// handle answers one request. The fds it returns are duplicates taken while
// the object was known to be alive; the caller closes them after sending.
func (s *ctlServer) handle(req message) (message, []int) {
	c := s.c
	reply := message{typ: req.typ}
	fail := func(err error) (message, []int) {
		reply.status = provider.StatusOf(err)
		if reply.status == provider.StatusSuccess {
			reply.status = provider.StatusFail
		}
		// The status travels on its own; keep only the detail.
		reply.payload = []byte(strings.TrimSuffix(err.Error(), ": "+reply.status.Error()))
		return reply, nil
	}
	w := wire{b: req.payload}
	switch req.typ {
	case msgHello:
		fd, err := dupFD(c.page.m.fd)
		if err != nil {
			return fail(err)
		}
		reply.payload = (&wire{}).u32(uint32(os.Getpid())).b
		reply.fds = []int{fd}
		return reply, reply.fds
	case msgImportSeg:
		var desc provider.SegmentDesc
		err := desc.UnmarshalBinary(w.take(provider.SegmentDescSize))
		token := w.getU32()
		// A request cut short of its token is malformed, not one for
		// token 0: a segment without a token policy would accept it.
		if err != nil || w.short {
			return fail(provider.Errorf(provider.ErrInvalid, "malformed import request"))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		seg, err := c.findSegmentLocked(desc, token)
		if err != nil {
			return fail(err)
		}
		return s.segReply(reply, seg)
	case msgSegFD:
		h, gen := w.getU32(), w.getU32()
		c.mu.Lock()
		defer c.mu.Unlock()
		seg := c.segByHandle(h, gen)
		if w.short || seg == nil || seg.closed.Load() {
			return fail(provider.Errorf(provider.ErrNotFound, "no segment with handle %d generation %d", h, gen))
		}
		return s.segReply(reply, seg)
	case msgImportJetty:
		var desc provider.JettyDesc
		err := desc.UnmarshalBinary(w.take(provider.JettyDescSize))
		token := w.getU32()
		if err != nil || w.short {
			return fail(provider.Errorf(provider.ErrInvalid, "malformed import request"))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		ep, err := c.findEndpointLocked(desc, token)
		if err != nil {
			return fail(err)
		}
		return s.jettyReply(reply, ep.rq)
	case msgList:
		b, err := json.Marshal(c.info())
		if err != nil {
			return fail(err)
		}
		reply.payload = b
		return reply, nil
	}
	return fail(provider.Errorf(provider.ErrNotSupported, "control request type %d", req.typ))
}

func (s *ctlServer) segReply(reply message, seg *segment) (message, []int) {
	r := segReply{handle: seg.handle, gen: seg.ref.gen, pid: uint32(os.Getpid()), va: seg.desc.VA,
		len: seg.desc.Len, access: seg.desc.Access}
	if seg.m == nil {
		r.caller = true
	} else {
		fd, err := dupFD(seg.m.fd)
		if err != nil {
			reply.status, reply.payload = provider.StatusNoMemory, []byte(err.Error())
			return reply, nil
		}
		r.size = uint64(len(seg.m.mem))
		reply.fds = []int{fd}
	}
	reply.payload = r.encode()
	return reply, reply.fds
}

func (s *ctlServer) jettyReply(reply message, rq *recvq) (message, []int) {
	r := jettyReply{id: rq.id, maxSGE: uint32(rq.maxSGE), depth: uint32(rq.ring.limit), slotSize: rq.ring.slotSize,
		crFlags: uint32(rq.crFlags), jfcID: rq.jfc.id, jfcDepth: uint32(rq.jfc.view.ring.limit),
		jfcSlotSize: rq.jfc.view.ring.slotSize}
	fds := make([]int, 0, 4)
	for _, fd := range []int{rq.ring.m.fd, rq.jfc.view.ring.m.fd, rq.jfc.view.efd, rq.inbox.box.r.m.fd} {
		if fd < 0 {
			continue
		}
		d, err := dupFD(fd)
		if err != nil {
			for _, x := range fds {
				unix.Close(x)
			}
			reply.status, reply.payload = provider.StatusNoMemory, []byte(err.Error())
			return reply, nil
		}
		fds = append(fds, d)
	}
	if rq.jfc.view.efd >= 0 {
		r.hasEventfd = 1
	}
	r.inboxCells = uint32(rq.inbox.box.r.limit)
	reply.payload = r.encode()
	reply.fds = fds
	return reply, fds
}

// notify handles a peer's report that it dropped a record of one of our
// JFCs: the owner raises the JFC_ERR event, as for a local overflow.
func (s *ctlServer) notify(payload []byte) {
	w := wire{b: payload}
	id := w.getU32()
	if w.short {
		return
	}
	s.c.mu.Lock()
	var j *jfc
	for ch := range s.c.children.All() {
		if x, ok := ch.(*jfc); ok && x.id == id {
			j = x
			break
		}
	}
	s.c.mu.Unlock()
	if j != nil && !j.closed.Load() {
		j.ctx.events.Raise(provider.EventJFCErr, &j.src, 0)
	}
}

func dupFD(fd int) (int, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, provider.Errorf(provider.ErrNoMemory, "dup: %v", err)
	}
	return d, nil
}
