package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// run starts the server, the client, or both in this process.
func run(ctx context.Context, w io.Writer, c config) error {
	switch {
	case c.Server:
		return serve(ctx, w, c, nil)
	case c.Client:
		return dial(ctx, w, c, clientWork)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.Addr = ln.Addr().String()
	lw := exutil.LockedWriter(w)
	var wg sync.WaitGroup
	var srvErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		srvErr = serve(ctx, lw, c, ln)
	}()
	cliErr := dial(ctx, lw, c, clientWork)
	if cliErr != nil {
		_ = ln.Close()
	}
	wg.Wait()
	if cliErr != nil && errors.Is(srvErr, net.ErrClosed) {
		srvErr = nil // the server was waiting for this client
	}
	return errors.Join(cliErr, srvErr)
}

// clientWork is what the program's client does: the corruption check if
// asked for, then the load.
func clientWork(ctx context.Context, w io.Writer, cl *client, c config) error {
	if c.corrupt {
		if err := corruptCheck(ctx, w, cl, c.size); err != nil {
			return err
		}
		cl.stats = clientStats{}
	}
	return load(ctx, w, cl, c)
}

// dial connects a client to the server and runs work.
func dial(ctx context.Context, w io.Writer, c config, work func(context.Context, io.Writer, *client, config) error) (err error) {
	eid, err := c.EIDFor(true)
	if err != nil {
		return err
	}
	e, err := newEnd("client", c.Common, eid, maxResponse, maxRequest)
	cl := &client{end: e}
	defer func() { err = errors.Join(err, cl.close()) }()
	if err != nil {
		return err
	}
	if cl, err = newClient(e); err != nil {
		return err
	}
	conn, err := exutil.Dial(ctx, c.Addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer context.AfterFunc(ctx, func() { _ = conn.Close() })()
	if err := e.connect(ctx, conn); err != nil {
		return err
	}
	// The server says nothing on the connection until it answers the
	// goodbye: a read that ends sooner means it went away, and ends the
	// work at once rather than after a wait for a response that cannot
	// come.
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		_, _ = conn.Read(make([]byte, 1))
		cancel(&serverGoneError{addr: c.Addr})
	}()
	fmt.Fprintf(w, "storage: client on %v eid %v, connected to %v, %s mode\n", e.ctx.Device(), e.ctx.EID(), c.Addr, c.Mode)
	if err := work(wctx, w, cl, c); err != nil {
		return serverGone(ctx, wctx, e.cq.Explain(err))
	}
	if err := context.Cause(wctx); err != nil {
		return err // the server left as the work ended
	}
	// Goodbye, a byte; the server answers once it stopped using our views.
	if _, err := conn.Write([]byte{0}); err != nil {
		return err
	}
	<-answered
	return nil
}

// serverGoneError is a client's failure when its server went away: the
// server's end of the connection closed, or sent its goodbye, before the
// client's. req is the first request that failed with it, if one did.
type serverGoneError struct {
	addr string
	req  *jetty.CRError
}

func (e *serverGoneError) Error() string {
	if e.req != nil {
		return fmt.Sprintf("the server at %s went away: %v", e.addr, e.req)
	}
	return fmt.Sprintf("the server at %s went away", e.addr)
}

func (e *serverGoneError) Unwrap() error {
	if e.req != nil {
		return e.req
	}
	return nil
}

// serverGone returns err, the failure of the client's work, as the
// server's going away when that is what it was: wctx, the work's context,
// is cancelled with a *serverGoneError when the server's end of the
// connection closes. A request to a server that died fails about when
// that happens and can come first, so a failed request waits a second for
// the news. The error then names the server and the failed request's
// status, not what became of the queue after.
func serverGone(ctx, wctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var cre *jetty.CRError
	if errors.As(err, &cre) || errors.Is(err, urma.ErrBadState) {
		select {
		case <-wctx.Done():
		case <-time.After(time.Second):
		}
	}
	var g *serverGoneError
	if !errors.As(context.Cause(wctx), &g) {
		return err
	}
	return &serverGoneError{addr: g.addr, req: cre}
}

// corruptCheck sends one write of size bytes whose data goes bad after
// its CRCs were computed, expects the server to refuse it as corrupted,
// and checks that nothing was stored.
func corruptCheck(ctx context.Context, w io.Writer, cl *client, size int) error {
	const id = 1 << 62
	data := make([]byte, size)
	fill(data, 7)
	if size > inlineMax {
		cl.corruptNextWrite = true
	}
	var err error
	if size <= inlineMax {
		// Inline: the tail CRC32 is of the payload; send a wrong one.
		h := header{id: id, size: uint16(size), typ: typeWrite}
		n := encodeRequest(cl.sendBuf(), h, data)
		cl.sendBuf()[n-1] ^= 0xff
		var status byte
		if status, _, err = cl.roundTrip(ctx, n, id); err == nil && status != statusOK {
			err = &statusError{"write", id, status}
		}
	} else {
		err = cl.write(ctx, id, data)
	}
	var se *statusError
	if !errors.As(err, &se) || se.status != statusCorrupted {
		return fmt.Errorf("a corrupted write: got %v, want the server to refuse it as corrupted", err)
	}
	_, err = cl.read(ctx, id, size)
	if !errors.As(err, &se) || se.status != statusNotFound {
		return fmt.Errorf("reading back a refused write: got %v, want not found", err)
	}
	fmt.Fprintf(w, "storage: corrupted %d-byte write refused (%s), nothing stored\n", size, statusName(statusCorrupted))
	return nil
}

// load issues c.count requests over c.keys IDs, c.readPct of them reads of
// IDs already written, and checks every read against what was written.
func load(ctx context.Context, w io.Writer, cl *client, c config) error {
	r := rand.New(rand.NewPCG(uint64(c.size), uint64(c.keys)))
	written := map[uint64]uint32{} // id -> checksum of its data
	data := make([]byte, c.size)
	var lat time.Duration
	start := time.Now()
	for i := 0; i < c.count; i++ {
		id := uint64(r.IntN(c.keys)) + 1
		sum, ok := written[id]
		t0 := time.Now()
		if ok && r.IntN(100) < c.readPct {
			got, err := cl.read(ctx, id, c.size)
			if err != nil {
				return err
			}
			if checksum(got) != sum {
				return fmt.Errorf("read of id %d returned other data than was written", id)
			}
		} else {
			fill(data, r.Uint64())
			if err := cl.write(ctx, id, data); err != nil {
				return err
			}
			written[id] = checksum(data)
		}
		lat += time.Since(t0)
	}
	el := time.Since(start)
	st := cl.stats
	fmt.Fprintf(w, "storage: client: %d writes, %d reads (%d inline, %d by RDMA) of %d bytes, all reads verified\n",
		st.writes, st.reads, st.inline, st.rdma, c.size)
	if c.count > 0 {
		fmt.Fprintf(w, "storage: %.0f IOPS, %.2f MB/s, average latency %.1f us\n",
			float64(c.count)/el.Seconds(), float64(st.bytes)/el.Seconds()/1e6, float64(lat.Microseconds())/float64(c.count))
	}
	return nil
}

// fill writes a pattern derived from seed.
func fill(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, ^seed))
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for k := 0; k < 8; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	copy(b[len(b)&^7:], bytes.Repeat([]byte{byte(seed)}, len(b)&7))
}
