//go:build cgo && urma_verbs

package ib

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// remote is an imported JFR or Jetty: its owner checked the token once,
// and connections to it present the token again.
type remote struct {
	desc   provider.JettyDesc
	token  uint32
	ctx    *ibContext
	closed atomic.Bool
	// foreign marks a plain rdma_cm peer (rdmacm_linux.go): no URMA
	// context answers there, so its connection is never remade. done is
	// its Done channel, closed once by end.
	foreign bool
	done    chan struct{}
	endOnce sync.Once
}

// Done implements provider.CMPeer for a plain rdma_cm peer.
func (r *remote) Done() <-chan struct{} { return r.done }

// end closes the Done channel of a plain rdma_cm peer.
func (r *remote) end() {
	if r.foreign {
		r.endOnce.Do(func() { close(r.done) })
	}
}

func (c *ibContext) Import(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.Remote, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	req := request{op: opImportJetty, target: desc.ID.ID, token: token, kind: desc.Kind, mode: desc.Mode,
		policy: desc.TokenPolicy, srcUASID: c.uasid}
	d, err := c.dial(ctx, desc.ID.EID, desc.ID.UASID, req, c.probeQP)
	if err != nil {
		return nil, err
	}
	if err := d.reply.err("import of " + desc.Kind.String()); err != nil {
		return nil, err
	}
	r := &remote{desc: desc, token: token, ctx: c}
	c.track(r)
	return r, nil
}

func (r *remote) Desc() provider.JettyDesc { return r.desc }
func (r *remote) rank() int                { return 4 }
func (r *remote) forceClose() error        { return r.close() }

func (r *remote) Close() error {
	r.ctx.closeMu.RLock()
	defer r.ctx.closeMu.RUnlock()
	return r.close()
}

func (r *remote) close() error {
	if r.closed.Swap(true) {
		return errClosed("remote")
	}
	r.end()
	r.ctx.untrack(r)
	return nil
}

// ownRemote checks that a request's target was imported into c.
func (c *ibContext) ownRemote(p provider.Remote) (*remote, error) {
	r, ok := p.(*remote)
	if !ok || r == nil || r.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "target was not imported into this context")
	}
	if r.closed.Load() {
		return nil, errClosed("imported target")
	}
	return r, nil
}

// receiver is what a connection request can name: a JFR, or a Jetty.
func (c *ibContext) receiver(r request) (*jfr, *jetty, error) {
	var rq *jfr
	var jt *jetty
	switch q := c.queue(r.target).(type) {
	case *jfr:
		rq = q
	case *jetty:
		jt, rq = q, q.rq
	}
	switch {
	case rq == nil, r.kind == provider.KindJFR && jt != nil, r.kind == provider.KindJetty && jt == nil:
		return nil, nil, provider.Errorf(provider.ErrNotFound, "no %v with id %d", r.kind, r.target)
	case rq.closed.Load(), jt != nil && jt.closed.Load():
		return nil, nil, provider.Errorf(provider.ErrNotFound, "%v %d is closed", r.kind, r.target)
	case r.mode != rq.mode:
		return nil, nil, provider.Errorf(provider.ErrInvalid, "%v %d is %v, not %v", r.kind, r.target, rq.mode, r.mode)
	case r.policy != rq.policy:
		return nil, nil, provider.Errorf(provider.ErrInvalid, "descriptor does not match %v %d", r.kind, r.target)
	case rq.policy != provider.TokenNone && r.token != rq.token:
		return nil, nil, provider.Errorf(provider.ErrPermission, "wrong token for %v %d", r.kind, r.target)
	}
	return rq, jt, nil
}

func (c *ibContext) answerJettyImport(r request) (reply, error) {
	if r.kind == provider.KindJettyGroup {
		return c.answerGroupImport(r)
	}
	rq, _, err := c.receiver(r)
	if err != nil {
		return reply{}, err
	}
	return reply{id: rq.id}, nil
}
