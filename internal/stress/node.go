package stress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Node is one side of the workload: a context, one segment holding every
// worker's region, and each worker's queues.
type Node struct {
	cfg     Config
	ctx     *urma.Context
	seg     *segment.Segment
	token   uint32
	workers []*worker
	tgt     *segment.Target

	outMu sync.Mutex
	out   io.Writer

	peerDone chan struct{} // closed when the peer drained or is gone
	doneOnce sync.Once
	drained  atomic.Int32 // workers with nothing in flight after the run
	running  atomic.Bool  // connected to the peer, past the setup
}

// Running reports whether the node is connected to its peer and running.
func (n *Node) Running() bool { return n.running.Load() }

// hello is what a node tells its peer.
type hello struct {
	Seg   []byte `json:"seg"`
	Token uint32 `json:"token"`
	// Queues holds each worker's JFR, or RC Jetty, descriptor.
	Queues [][]byte `json:"queues"`
}

// Open creates a node's resources; out receives its protocol lines.
func Open(cfg Config, out io.Writer) (n *Node, err error) {
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	dev, err := urma.DeviceByName(cfg.Device)
	if err != nil {
		return nil, err
	}
	n = &Node{cfg: cfg, out: out, token: rand.Uint32() | 1, peerDone: make(chan struct{})}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
			n = nil
		}
	}()
	if n.ctx, err = urma.Open(dev, cfg.EID, nil); err != nil {
		return n, err
	}
	n.seg, err = segment.Alloc(n.ctx, uint64(cfg.Workers*regionSize), segment.Config{
		Access: segment.Read | segment.Write | segment.Atomic, TokenPolicy: segment.TokenPlainText, Token: n.token})
	if err != nil {
		return n, err
	}
	inline := 0 // DEBUG min(64, dev.Attr().MaxInline)
	for i := range cfg.Workers {
		w, err := newWorker(n, i, inline)
		if err != nil {
			return n, fmt.Errorf("worker %d: %w", i, err)
		}
		n.workers = append(n.workers, w)
	}
	return n, nil
}

// Hello returns the line that tells the peer how to reach this node.
func (n *Node) Hello() (string, error) {
	h := hello{Token: n.token}
	var err error
	if h.Seg, err = n.seg.Descriptor().MarshalBinary(); err != nil {
		return "", err
	}
	for _, w := range n.workers {
		b, err := w.rq.Descriptor().MarshalBinary()
		if err != nil {
			return "", err
		}
		h.Queues = append(h.Queues, b)
	}
	b, err := json.Marshal(h)
	return "hello " + string(b), err
}

// Connect imports the peer's segment and queues from its hello line, and
// binds the RC Jetties to theirs.
func (n *Node) Connect(line string) error {
	var h hello
	rest, ok := strings.CutPrefix(line, "hello ")
	if !ok {
		return fmt.Errorf("stress: expected a hello line, got %.40q", line)
	}
	if err := json.Unmarshal([]byte(rest), &h); err != nil {
		return fmt.Errorf("stress: peer's hello: %w", err)
	}
	if len(h.Queues) != len(n.workers) {
		return fmt.Errorf("stress: peer has %d workers, this node %d", len(h.Queues), len(n.workers))
	}
	var sd segment.Descriptor
	if err := sd.UnmarshalBinary(h.Seg); err != nil {
		return fmt.Errorf("stress: peer's segment: %w", err)
	}
	if sd.Len < uint64(len(n.workers)*regionSize) {
		return fmt.Errorf("stress: peer's segment is %d bytes, too small", sd.Len)
	}
	var err error
	if n.tgt, err = segment.Import(context.Background(), n.ctx, sd, h.Token); err != nil {
		return err
	}
	for i, w := range n.workers {
		var jd jetty.Descriptor
		if err := jd.UnmarshalBinary(h.Queues[i]); err != nil {
			return fmt.Errorf("stress: peer's JFR %d: %w", i, err)
		}
		if w.jetty == nil {
			if w.peer, err = jetty.ImportJFR(context.Background(), n.ctx, jd, h.Token); err != nil {
				return err
			}
			w.to = w.peer
			continue
		}
		if w.peer, err = jetty.ImportJetty(context.Background(), n.ctx, jd, h.Token); err != nil {
			return err
		}
		if err := w.jetty.Bind(context.Background(), w.peer); err != nil {
			return err
		}
	}
	return nil
}

// PeerDone tells the node that the peer has nothing in flight any more (it
// sent its drained line), or that it is gone: the node's workers stop
// serving its SENDs once their own requests are done.
func (n *Node) PeerDone() { n.doneOnce.Do(func() { close(n.peerDone) }) }

// line writes one protocol line. Ledger lines go out before the request
// they announce is posted, so a peer sees them even if this process dies
// right after.
func (n *Node) line(s string) {
	n.outMu.Lock()
	defer n.outMu.Unlock()
	if n.out != nil {
		_, _ = io.WriteString(n.out, s+"\n")
	}
}

func (n *Node) ledger(what string, w, slot int, seq uint64) {
	b := make([]byte, 0, 40)
	b = append(b, what...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(slot), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, seq, 10)
	n.line(string(b))
}

// Close frees everything, in URMA's order. Nil-safe.
func (n *Node) Close() error {
	if n == nil {
		return nil
	}
	var errs []error
	for _, w := range n.workers {
		errs = append(errs, w.close())
	}
	errs = append(errs, n.tgt.Close(), n.seg.Close(), n.ctx.Close())
	return errors.Join(errs...)
}

// HeldByOthers counts the slots, cells and locks of this node's JFCs that
// another process holds and that stop their records (a provider that can
// tell says so through a HeldByOthers method of its JFCs; 0 otherwise). A
// peer stopped in the middle of pushing a record holds one, and a wait on
// it is the peer's, not a hang.
func (n *Node) HeldByOthers() int {
	held := 0
	for _, w := range n.workers {
		if h, ok := w.jfc.Raw().(interface{ HeldByOthers() int }); ok {
			held += h.HeldByOthers()
		}
	}
	return held
}
