package remote

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/urma-go/sdk/provider"
)

// envPeer is set by Start in the peer's environment to the number of the
// descriptor the peer serves on.
const envPeer = "URMA_PROVIDERTEST_REMOTE_FD"

// MaybeServe makes this process a peer if Start launched it, and otherwise
// returns at once. Call it first thing in TestMain. A peer serves requests
// until its connection closes (the test process closed it or died), then
// closes the contexts it opened and exits with status 0; it never returns.
func MaybeServe() {
	v, ok := os.LookupEnv(envPeer)
	if !ok {
		return
	}
	// Processes this one starts must not take themselves for peers.
	_ = os.Unsetenv(envPeer)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "remote peer: bad %s=%q\n", envPeer, v)
		os.Exit(2)
	}
	// FileConn duplicates the descriptor close-on-exec; closing the
	// inherited one keeps it from leaking into anything the peer runs,
	// which would hold the connection open after the peer died.
	f := os.NewFile(uintptr(fd), "remote-peer")
	conn, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "remote peer: %v\n", err)
		os.Exit(2)
	}
	s := newSession(conn)
	s.serve()
	s.shutdown()
	os.Exit(0)
}

// handler runs one kind of request.
type handler struct {
	args func() any
	run  func(s *session, a any) (any, error)
}

var handlers = map[op]handler{}

// serve registers the function that answers r.
func serve[A, R any](r rpc[A, R], f func(s *session, a *A) (*R, error)) {
	handlers[r.op] = handler{
		args: func() any { return new(A) },
		run: func(s *session, a any) (reply any, err error) {
			// A provider that panics fails the request instead of killing
			// the peer and with it every test using it.
			defer func() {
				if p := recover(); p != nil {
					reply = new(R)
					err = provider.Errorf(provider.ErrFail, "provider panicked in the peer: %v\n%s", p, debug.Stack())
				}
			}()
			rep, err := f(s, a.(*A))
			if rep == nil {
				rep = new(R)
			}
			return rep, err
		},
	}
}

// preparer is implemented by arguments that need set-up in stream order,
// before later requests are read.
type preparer interface{ prepare(s *session) }

// session is the peer's state for its connection: the objects it created,
// by handle, and the calls that can be canceled.
type session struct {
	conn net.Conn
	wmu  sync.Mutex
	bw   *bufio.Writer
	enc  *gob.Encoder

	mu      sync.Mutex
	next    uint64
	objs    map[uint64]entry
	ctxs    []provider.Context
	mems    map[uint64]*callerMem
	cancels map[uint64]func()
}

// entry is one object and the handle of the context it belongs to, so that
// closing a context forgets its objects: every later call on them fails
// with ErrClosed, as the provider contract has it.
type entry struct {
	v   any
	ctx uint64
}

func newSession(conn net.Conn) *session {
	bw := bufio.NewWriter(conn)
	return &session{conn: conn, bw: bw, enc: gob.NewEncoder(bw),
		objs: map[uint64]entry{}, mems: map[uint64]*callerMem{}, cancels: map[uint64]func(){}}
}

// serve reads requests until the connection ends. Each runs on its own
// goroutine because some block (JFCE.Wait, AsyncEvent) while others must
// go on.
func (s *session) serve() {
	dec := gob.NewDecoder(bufio.NewReader(s.conn))
	for {
		var h header
		if err := dec.Decode(&h); err != nil {
			return
		}
		hd, ok := handlers[h.Op]
		if !ok {
			// Both ends are the same binary; a stranger on the stream
			// means it is corrupt.
			fmt.Fprintf(os.Stderr, "remote peer: unknown request %d\n", h.Op)
			return
		}
		a := hd.args()
		if err := dec.Decode(a); err != nil {
			return
		}
		if p, ok := a.(preparer); ok {
			p.prepare(s)
		}
		go s.run(h.ID, hd, a)
	}
}

func (s *session) run(id uint64, hd handler, a any) {
	reply, err := hd.run(s, a)
	st, msg := encodeErr(err)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.enc.Encode(&header{ID: id, Status: st, Msg: msg}) != nil || s.enc.Encode(reply) != nil || s.bw.Flush() != nil {
		// The test process reads nothing more from a broken stream; the
		// read loop sees the connection end and the peer exits.
		_ = s.conn.Close()
	}
}

// shutdown closes what the test process left open, newest first, so that
// providers with host-wide state (loopback's runtime directory) are left
// clean. It gives up after shutdownLimit: the process is exiting anyway.
func (s *session) shutdown() {
	s.mu.Lock()
	ctxs := s.ctxs
	s.ctxs = nil
	for _, f := range s.cancels {
		f()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for i := len(ctxs) - 1; i >= 0; i-- {
			_ = ctxs[i].Close()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(shutdownLimit):
		fmt.Fprintf(os.Stderr, "remote peer: closing contexts took more than %v; exiting anyway\n", shutdownLimit)
	}
}

const shutdownLimit = 2 * time.Second
