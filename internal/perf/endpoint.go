package perf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// endpoint is one side's resources: a JFC (on a JFCE in event mode), and
// for SEND tests that poll a second one for receives, as perftest has a
// send and a receive CQ; an RC Jetty or a JFS and JFR; and one segment of
// two regions of the largest size, a page apart: the first receives (the
// peer WRITEs, READs and atomics go there, and receives land there), the
// second is the source of this side's requests.
type endpoint struct {
	cfg  Config
	ctx  *urma.Context
	jfce *jetty.JFCE
	jfc  *jetty.JFC
	// rjfc takes the receives' records. It is jfc but in SEND tests that
	// poll: there a JFC of both would have its records reserved by this
	// side's requests and by the peer's messages alike, and its
	// reservation word would cross between the cores in every round trip.
	rjfc   *jetty.JFC
	jetty  *jetty.Jetty
	jfs    *jetty.JFS
	jfr    *jetty.JFR
	seg    *segment.Segment
	token  uint32
	region int
	// stride is where the second region starts: region rounded up to a
	// page, as perftest's buffers are, so that a small test's two regions
	// never share a cache line: sharing one, this side's store of its
	// next message's marker would wait for the line the peer had just
	// written its message into.
	stride int
	// inline is the largest request sent inline.
	inline int
	// peer is the other side's Jetty (bound) or JFR; tgt its segment.
	peer *jetty.Remote
	tgt  *segment.Target
	// post and postRecv are the queue's; prepare and prepareRecv too,
	// but only in a tuned run (nil otherwise: the default loops post
	// through the plain API alone).
	post        func([]jetty.WR) error
	postRecv    func([]jetty.RecvWR) error
	prepare     func(jetty.WR) (*jetty.Prepared, error)
	prepareRecv func([]jetty.RecvWR) (*jetty.PreparedRecv, error)
	crs         []jetty.CR
	// lockFree is whether the JFS and JFCs were created lock-free;
	// prepared counts the requests and receive lists prepared. Both say
	// what a run used (the tests check them).
	lockFree bool
	prepared int
	// responderReads and responderSeen count the atomic_lat server's
	// reads of the target word and the changes of it that they saw.
	responderReads, responderSeen int64
	// recvsPosted counts receives posted and not consumed; pendingSend
	// requests posted and not yet retired by a record; pendingRecv
	// receives completed and not yet consumed by a loop. They carry over
	// from one size to the next: a server's loop ends with its last
	// request running.
	recvsPosted, pendingSend, pendingRecv int
	// pace yields the spinning loops to Go's scheduler now and then.
	pace spin.Pacer
}

// openEndpoint opens the device's EID eid and creates the resources cfg
// needs.
func openEndpoint(devName string, eid int, cfg Config) (e *endpoint, err error) {
	dev, err := urma.DeviceByName(devName)
	if err != nil {
		return nil, err
	}
	attr := dev.Attr()
	e = &endpoint{cfg: cfg, token: rand.Uint32() | 1, region: cfg.maxSize(), lockFree: cfg.Tuned || cfg.LockFree}
	e.stride = (e.region + pageSize - 1) &^ (pageSize - 1)
	defer func() {
		if err != nil {
			err = errors.Join(err, e.close())
			e = nil
		}
	}()
	if cfg.Test.Op == Write || cfg.Test.Op == Send {
		e.inline = cfg.Inline
		if e.inline < 0 {
			e.inline = attr.MaxInline
		}
		if e.inline > attr.MaxInline {
			return e, fmt.Errorf("inline %d: %s sends at most %d bytes inline", e.inline, dev, attr.MaxInline)
		}
	}
	if !attr.SupportsMode(cfg.Mode) {
		return e, provider.Errorf(urma.ErrNotSupported, "%s has no %v mode", dev, cfg.Mode)
	}
	if cfg.Mode == urma.UM && uint64(e.region) > attr.MaxUMMsgSize {
		return e, provider.Errorf(urma.ErrInvalid, "size %d: %s carries UM messages of up to %d bytes", e.region, dev, attr.MaxUMMsgSize)
	}
	if e.ctx, err = urma.Open(dev, eid, nil); err != nil {
		return e, err
	}
	if err := e.newJFCs(); err != nil {
		return e, err
	}
	e.crs = make([]jetty.CR, 64)
	// Lock-free as its JFCs are when asked: the run's loop alone posts
	// (see newJFC).
	send := jetty.JFSConfig{Depth: cfg.TxDepth, Mode: cfg.Mode, MaxInline: e.inline, JFC: e.jfc, LockFree: e.lockFree}
	recv := jetty.JFRConfig{Depth: cfg.RxDepth, Mode: cfg.Mode, TokenPolicy: segment.TokenPlainText, Token: e.token, JFC: e.rjfc}
	if cfg.Mode == urma.RC {
		if e.jetty, err = jetty.NewJetty(e.ctx, jetty.JettyConfig{Send: send, Recv: recv}); err != nil {
			return e, err
		}
		e.post, e.postRecv = e.jetty.Post, e.jetty.PostRecv
		if cfg.Tuned {
			e.prepare, e.prepareRecv = e.jetty.Prepare, e.jetty.PrepareRecv
		}
	} else {
		if e.jfs, err = jetty.NewJFS(e.ctx, send); err != nil {
			return e, err
		}
		if e.jfr, err = jetty.NewJFR(e.ctx, recv); err != nil {
			return e, err
		}
		e.post, e.postRecv = e.jfs.Post, e.jfr.PostRecv
		if cfg.Tuned {
			e.prepare, e.prepareRecv = e.jfs.Prepare, e.jfr.PrepareRecv
		}
	}
	access := segment.Read | segment.Write
	if cfg.Test.Op == Atomic {
		access |= segment.Atomic
	}
	e.seg, err = segment.Alloc(e.ctx, uint64(e.stride+e.region), segment.Config{Access: access,
		TokenPolicy: segment.TokenPlainText, Token: e.token, HugePages: e.stride+e.region >= 2<<20})
	if err == nil && endpointOpened != nil {
		endpointOpened(e)
	}
	return e, err
}

// endpointOpened, when set (by tests), is told of every endpoint opened.
var endpointOpened func(*endpoint)

// newJFCs creates the JFCs (and a JFCE in event mode): in SEND tests that
// poll, one for receives and one for everything else. Event mode keeps
// one JFC on one JFCE: a wake costs far more than the split saves, and
// with a second JFC on a second JFCE the event-mode send_lat can
// allocate on the data path when both cores are busy (cmd/urmactl's
// TestPerfTwoProcesses checks the allocations per operation).
func (e *endpoint) newJFCs() (err error) {
	cfg := e.cfg
	if cfg.Test.Op != Send || cfg.Event {
		e.jfc, e.jfce, err = e.newJFC(cfg.TxDepth + cfg.RxDepth)
		e.rjfc = e.jfc
		return err
	}
	if e.jfc, e.jfce, err = e.newJFC(cfg.TxDepth); err != nil {
		return err
	}
	e.rjfc, _, err = e.newJFC(cfg.RxDepth) // no JFCE when polling
	return err
}

// newJFC creates a JFC of depth records, on a JFCE of its own in event
// mode. What it made is returned along with an error, for close.
func (e *endpoint) newJFC(depth int) (j *jetty.JFC, ce *jetty.JFCE, err error) {
	if e.cfg.Event {
		if ce, err = jetty.NewJFCE(e.ctx); err != nil {
			return nil, nil, err
		}
	}
	// Lock-free when asked (-L, --tuned): the run's loop is the only
	// poller of its JFCs, as ucx_perftest's workers are single-threaded
	// (UCS_THREAD_MODE_SINGLE).
	j, err = jetty.NewJFC(e.ctx, jetty.JFCConfig{Depth: depth, JFCE: ce, LockFree: e.lockFree})
	return j, ce, err
}

// info is what the peer needs to reach this side.
func (e *endpoint) info() (endpointInfo, error) {
	var q jetty.Descriptor
	if e.jetty != nil {
		q = e.jetty.Descriptor()
	} else {
		q = e.jfr.Descriptor()
	}
	qb, err := q.MarshalBinary()
	if err != nil {
		return endpointInfo{}, err
	}
	sb, err := e.seg.Descriptor().MarshalBinary()
	if err != nil {
		return endpointInfo{}, err
	}
	return endpointInfo{Queue: qb, Seg: sb, Token: e.token}, nil
}

// connect imports the peer's queue (and binds to it in RC mode) and, for
// one-sided tests, its segment.
func (e *endpoint) connect(p endpointInfo) error {
	var q jetty.Descriptor
	if err := q.UnmarshalBinary(p.Queue); err != nil {
		return fmt.Errorf("peer's queue descriptor: %w", err)
	}
	var err error
	if e.jetty != nil {
		if e.peer, err = jetty.ImportJetty(context.Background(), e.ctx, q, p.Token); err != nil {
			return err
		}
		if err := e.jetty.Bind(context.Background(), e.peer); err != nil {
			return err
		}
	} else if e.peer, err = jetty.ImportJFR(context.Background(), e.ctx, q, p.Token); err != nil {
		return err
	}
	if e.cfg.Test.Op == Send {
		return nil
	}
	var s segment.Descriptor
	if err := s.UnmarshalBinary(p.Seg); err != nil {
		return fmt.Errorf("peer's segment descriptor: %w", err)
	}
	e.tgt, err = segment.Import(context.Background(), e.ctx, s, p.Token)
	return err
}

// recvBuf and sendBuf are the two regions' first n bytes.
func (e *endpoint) recvBuf(n int) []byte { return e.seg.Bytes()[:n] }
func (e *endpoint) sendBuf(n int) []byte { return e.seg.Bytes()[e.stride : e.stride+n] }

// pageSize is the least distance between the two regions.
const pageSize = 4096

// close frees everything in URMA's order. Nil-safe.
func (e *endpoint) close() error {
	if e == nil {
		return nil
	}
	var errs []error
	if e.jetty != nil && e.peer != nil {
		_ = e.jetty.Unbind()
	}
	errs = append(errs, e.tgt.Close(), e.peer.Close(), e.jetty.Close(), e.jfs.Close(), e.jfr.Close())
	if e.rjfc != e.jfc {
		errs = append(errs, e.rjfc.Close())
	}
	errs = append(errs, e.jfc.Close(), e.jfce.Close(), e.seg.Close(), e.ctx.Close())
	return errors.Join(errs...)
}
