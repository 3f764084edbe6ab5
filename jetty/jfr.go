package jetty

import (
	"sync"

	"github.com/urma-go/sdk/internal/viewio"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// JFRConfig configures a JFR or a Jetty's own receive queue. JFC is
// required. Zero fields take defaults: Depth DefaultDepth, Mode RM, MaxSGE
// the smaller of DefaultMaxSGE and the device's limit, TokenPolicy NONE.
type JFRConfig struct {
	Depth       int
	Mode        urma.TransportMode
	MaxSGE      int
	TokenPolicy segment.TokenPolicy
	// Token is the secret importers must present under PLAIN_TEXT.
	Token uint32
	JFC   *JFC

	// RxThreshold (DeviceAttr.RxThreshold), when non-zero, arms the
	// receive threshold at creation, as SetRxThreshold does; zero arms
	// none. It ranges from 0 to Depth.
	RxThreshold int
}

func (c JFRConfig) provider(uctx *urma.Context, owner any) (provider.JFRConfig, error) {
	if c.JFC == nil {
		return provider.JFRConfig{}, provider.Errorf(urma.ErrInvalid, "JFC is required")
	}
	if c.Depth < 0 || c.MaxSGE < 0 {
		return provider.JFRConfig{}, provider.Errorf(urma.ErrInvalid, "negative depth or sge count")
	}
	switch c.TokenPolicy {
	case segment.TokenNone:
	case segment.TokenPlainText:
		if c.Token == 0 {
			return provider.JFRConfig{}, provider.Errorf(urma.ErrInvalid, "token policy PLAIN_TEXT needs a non-zero token")
		}
	default:
		return provider.JFRConfig{}, provider.Errorf(urma.ErrNotSupported, "token policy %v", c.TokenPolicy)
	}
	attr := uctx.Device().Attr()
	pc := provider.JFRConfig{Depth: c.Depth, Mode: provider.TransportMode(c.Mode), MaxSGE: c.MaxSGE, TokenPolicy: provider.TokenPolicy(c.TokenPolicy),
		Token: c.Token, JFC: c.JFC.p, Owner: owner}
	if pc.Depth == 0 {
		pc.Depth = min(DefaultDepth, attr.MaxJFRDepth)
	}
	if pc.Mode == 0 {
		pc.Mode = provider.RM
	}
	if !pc.Mode.Valid() {
		return provider.JFRConfig{}, provider.Errorf(urma.ErrInvalid, "unknown transport mode %#x", uint8(pc.Mode))
	}
	if pc.MaxSGE == 0 {
		pc.MaxSGE = min(DefaultMaxSGE, attr.MaxJFRSGE)
	}
	if c.RxThreshold < 0 || c.RxThreshold > pc.Depth {
		return provider.JFRConfig{}, provider.Errorf(urma.ErrInvalid, "rx threshold %d, the queue allows 0..%d (its depth)", c.RxThreshold, pc.Depth)
	}
	pc.RxThreshold = c.RxThreshold
	return pc, nil
}

// receiver is the receive side shared by JFR and Jetty.
type receiver struct {
	post func([]provider.RecvWR) (int, error)
	// prep is the provider's queue when it prepares receives (PrepareRecv).
	prep provider.RecvPreparer
	kind string
	// jfc receives the queue's records; it finishes receives into views.
	jfc *JFC
	// mu guards the scratch request Recv builds (see sender).
	mu  sync.Mutex
	one [1]provider.RecvWR
	sge [1]provider.SGE
	// again is the error of the last refusal of a whole post (see
	// postErrors).
	again postErrors
}

// PostRecv queues receive requests (urma_post_jfr_wr). On error it returns a
// *PostError like Post. PostRecv keeps no reference to wrs.
func (r *receiver) PostRecv(wrs []RecvWR) error {
	// The requests have the provider's layout: they go as they are.
	// postAll's test is made here, as in sender.Post.
	raw := rawRecvWRs(wrs)
	var n int
	var err error
	if !viewio.Made() || !recvsUseViews(raw) {
		n, err = r.post(raw)
	} else {
		n, err = r.postViews(raw)
	}
	if err != nil {
		return r.again.of(r.kind, "post recv", n, err)
	}
	return nil
}

// Recv queues one receive into buf (urma_recv).
func (r *receiver) Recv(buf segment.SGE, userCtx uint64) error {
	r.mu.Lock()
	r.sge[0] = buf.Raw()
	w := &r.one[0] // filled in place (see sender.postOne)
	w.UserCtx, w.Local = userCtx, r.sge[:]
	n, err := r.postAll(r.one[:])
	r.one[0], r.sge[0] = provider.RecvWR{}, provider.SGE{}
	r.mu.Unlock()
	if err != nil {
		return r.again.of(r.kind, "recv", n, err)
	}
	return nil
}

// JFR is a receive queue (urma_jfr_t).
type JFR struct {
	receiver
	p      provider.JFR
	depth  int
	closer closer
}

// NewJFR creates a receive queue.
func NewJFR(uctx *urma.Context, cfg JFRConfig) (*JFR, error) {
	if uctx == nil {
		return nil, opErr("create jfr", provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	j := &JFR{}
	pc, err := cfg.provider(uctx, j)
	if err != nil {
		return nil, opErr("create jfr", err)
	}
	if err := cfg.JFC.take(pc.Depth, "JFR"); err != nil {
		return nil, opErr("create jfr", err)
	}
	p, err := uctx.Raw().NewJFR(pc)
	if err != nil {
		cfg.JFC.give(pc.Depth)
		return nil, opErr("create jfr", err)
	}
	j.p, j.depth = p, pc.Depth
	j.receiver.post, j.receiver.kind, j.receiver.jfc = p.PostRecv, "jfr", cfg.JFC
	j.receiver.prep, _ = p.(provider.RecvPreparer)
	return j, nil
}

// Descriptor returns what a peer needs to import this JFR.
func (j *JFR) Descriptor() Descriptor { return DescriptorOf(j.p.Desc()) }

// Query returns the queue's id, state, mode, depth and occupancy.
func (j *JFR) Query() (JFRAttr, error) {
	a, err := j.p.Query()
	if err != nil {
		return JFRAttr{}, opErr("jfr query", err)
	}
	st, ok := jfrStateOf(a.State)
	if !ok {
		return JFRAttr{}, opErr("jfr query", provider.Errorf(urma.ErrFail, "provider reports JFR state %v", a.State))
	}
	return JFRAttr{ID: urma.JettyIDOf(a.ID), State: st, Mode: urma.TransportMode(a.Mode), Depth: a.Depth, Outstanding: a.Outstanding}, nil
}

// Modify changes the JFR's state: to urma.JFRStateError, or from
// urma.JFRStateError to urma.JFRStateReset and then urma.JFRStateReady to use it again.
func (j *JFR) Modify(st urma.JFRState) error {
	var ps provider.State
	switch st {
	case urma.JFRStateReset:
		ps = provider.StateReset
	case urma.JFRStateReady:
		ps = provider.StateReady
	case urma.JFRStateError:
		ps = provider.StateError
	default:
		return opErr("jfr modify", provider.Errorf(urma.ErrInvalid, "unknown JFR state %v", st))
	}
	if err := j.p.Modify(ps); err != nil {
		return opErr("jfr modify", err)
	}
	return nil
}

// Raw returns the provider's JFR.
func (j *JFR) Raw() provider.JFR { return j.p }

// Close deletes the JFR; it fails with urma.ErrBusy while a Jetty shares
// it or an async event it raised is unacknowledged. Idempotent and nil-safe.
func (j *JFR) Close() error {
	if j == nil {
		return nil
	}
	return j.closer.close("delete jfr", closeQueue(j.p.Close, j.receiver.jfc, j.depth))
}
