package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// server serves one client's requests.
type server struct {
	*end
	st *store
	// targets are the client's views, imported once each.
	targets map[segment.Descriptor]*segment.Target
	stats   serverStats
}

type serverStats struct {
	writes, reads, inline, rdma, refused uint64
}

var errHangup = errors.New("the client hung up")

// serve listens on c.Addr (or uses ln), serves one client until it says
// goodbye, and prints what it did.
func serve(ctx context.Context, w io.Writer, c config, ln net.Listener) (err error) {
	eid, err := c.EIDFor(false)
	if err != nil {
		return err
	}
	e, err := newEnd("server", c.Common, eid, maxRequest, maxResponse)
	s := &server{end: e, targets: map[segment.Descriptor]*segment.Target{}}
	defer func() { err = joinErr(err, s.close()) }()
	if err != nil {
		return err
	}
	if s.st, err = newStore(e.ctx, c.chunks); err != nil {
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Addr); err != nil {
			return err
		}
	}
	defer ln.Close()
	fmt.Fprintf(w, "storage: server on %v eid %v, %d chunks of %d bytes (%d data + %d metadata), listening on %v\n",
		e.ctx.Device(), e.ctx.EID(), c.chunks, chunkSize, chunkData, chunkMeta, ln.Addr())
	conn, err := exutil.Accept(ctx, ln)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := e.connect(ctx, conn); err != nil {
		return err
	}
	// The client's goodbye, a byte, (or its going away) ends the loop.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		_, _ = conn.Read(make([]byte, 1))
		cancel(errHangup)
	}()
	err = s.loop(sctx)
	if errors.Is(err, context.Canceled) && errors.Is(context.Cause(sctx), errHangup) {
		err = nil
	}
	st := s.stats
	fmt.Fprintf(w, "storage: server: %d writes, %d reads (%d inline, %d by RDMA), %d refused; %d objects, %d free chunks\n",
		st.writes, st.reads, st.inline, st.rdma, st.refused, len(s.st.index), len(s.st.free))
	_, _ = conn.Write([]byte{0}) // goodbye
	return err
}

func (s *server) close() error {
	if s == nil || s.end == nil {
		return nil
	}
	var errs []error
	for _, t := range s.targets {
		errs = append(errs, t.Close())
	}
	return joinErr(append(errs, s.st.close(), s.end.close())...)
}

// loop answers requests until ctx ends.
func (s *server) loop(ctx context.Context) error {
	for {
		m, err := s.recvMsg(ctx, 24*time.Hour)
		if err != nil {
			return err
		}
		r, derr := decodeRequest(m)
		var status byte
		var payload []byte
		var crcErr *errCRC
		switch {
		case errors.As(derr, &crcErr):
			status = statusCorrupted
		case derr != nil:
			status = statusBadReq
		case r.typ == typeWrite:
			status, err = s.write(ctx, r)
		default:
			payload, status, err = s.read(ctx, r)
		}
		if err != nil {
			return err
		}
		if status != statusOK {
			s.stats.refused++
		}
		n := encodeResponse(s.sendBuf(), r.id, status, payload)
		if err := s.sendMsg(ctx, n); err != nil {
			return err
		}
	}
}

// target imports a client view, once.
func (s *server) target(d segment.Descriptor) (*segment.Target, error) {
	if t, ok := s.targets[d]; ok {
		return t, nil
	}
	t, err := segment.Import(context.Background(), s.ctx, d, s.peerToken)
	if err != nil {
		return nil, err
	}
	s.targets[d] = t
	return t, nil
}

// write stores a payload: inline ones from the request, larger ones READ
// from the client's view straight into free chunks through the store's
// view, which checks each chunk's CRC on the READ. Chunks join the index
// only when every check passed: a corrupted payload stores nothing.
func (s *server) write(ctx context.Context, r request) (byte, error) {
	s.stats.writes++
	if r.inline() {
		s.stats.inline++
		return s.st.putInline(r.id, r.payload), nil
	}
	s.stats.rdma++
	n := chunksFor(int(r.size))
	chunks, ok := s.st.alloc(n)
	if !ok {
		return statusNoSpace, nil
	}
	status, err := s.rdma(ctx, r, chunks, urma.OpRead)
	if status != statusOK || err != nil {
		s.st.release(chunks)
		return status, err
	}
	for _, c := range chunks {
		if metaID(s.st.chunk(c)[chunkData:]) != r.id {
			s.st.release(chunks)
			return statusBadReq, nil
		}
	}
	s.st.commit(r.id, chunks, int(r.size))
	if stored != nil {
		stored(s.st, r.id)
	}
	return statusOK, nil
}

// stored, when set (by tests), sees each RDMA write the server stored, so
// that a test can damage it as failing media would.
var stored func(s *store, id uint64)

// read returns an object: inline ones in the response, larger ones
// WRITten from the chunks to the client's view through the store's view,
// which checks each chunk's CRC on the way out.
func (s *server) read(ctx context.Context, r request) ([]byte, byte, error) {
	s.stats.reads++
	o, ok := s.st.index[r.id]
	switch {
	case !ok:
		return nil, statusNotFound, nil
	case o.size != int(r.size):
		return nil, statusBadReq, nil
	case r.inline():
		s.stats.inline++
		p, st := s.st.getInline(o, make([]byte, inlineMax))
		return p, st, nil
	}
	s.stats.rdma++
	st, err := s.rdma(ctx, r, o.chunks, urma.OpWrite)
	return nil, st, err
}

// rdma moves whole chunks between the store and the client's view: READ
// into them or WRITE out of them.
func (s *server) rdma(ctx context.Context, r request, chunks []int, op urma.Opcode) (byte, error) {
	t, err := s.target(r.desc)
	if err != nil {
		return statusBadReq, nil
	}
	n := uint64(len(chunks)) * chunkSize
	if t.Len() < n {
		return statusBadReq, nil
	}
	if err := s.st.view.Configure(s.st.viewConfig(chunks)); err != nil {
		return 0, err
	}
	v := s.st.view.SGE(0, uint32(n))
	if op == urma.OpRead {
		err = s.jfs.Read(s.peer, t.SGE(0, uint32(n)), v, 0, rdmaCtx)
	} else {
		err = s.jfs.Write(s.peer, t.SGE(0, uint32(n)), v, 0, rdmaCtx)
	}
	if err != nil {
		return 0, err
	}
	werr := s.wait(ctx, rdmaCtx)
	cerr := s.st.view.Check() // forget the mismatch either way
	switch {
	case errors.Is(werr, urma.ErrSignature):
		return statusCorrupted, nil
	case werr != nil:
		return 0, werr
	case cerr != nil:
		return statusCorrupted, nil
	}
	return statusOK, nil
}
