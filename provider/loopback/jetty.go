package loopback

import (
	"context"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/jgroup"
	"github.com/urma-go/sdk/provider/internal/objtab"
)

// remote is an imported JFR or Jetty.
type remote struct {
	ctx    *lbContext
	desc   provider.JettyDesc
	rq     *rqView
	closed atomic.Bool
	// self names the remote in the requests the queue rebuilds itself
	// (takeBack).
	self provider.RemoteRef
}

func (c *lbContext) Import(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.Remote, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := provider.ContextErr(ctx); err != nil {
		return nil, err
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	var rq *rqView
	if owner := fabricFind(desc.ID.EID, desc.ID.UASID); owner != nil {
		ep, err := owner.findEndpoint(desc, token)
		if err != nil {
			return nil, err
		}
		rq = &ep.rq.view
	} else {
		p, err := c.peer(ctx, desc.ID.EID, desc.ID.UASID)
		if err != nil {
			return nil, err
		}
		if rq, err = p.importJetty(ctx, desc, token); err != nil {
			return nil, err
		}
	}
	r := &remote{ctx: c, desc: desc, rq: rq}
	r.self.Remote = r
	if _, err := c.adopt(r); err != nil {
		return nil, err
	}
	return r, nil
}

func (c *lbContext) ownRemote(p provider.Remote) (*remote, error) {
	r := asRemote(p)
	if r == nil || r.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "target is not a remote imported into this context")
	}
	if r.closed.Load() {
		return nil, errClosed("remote " + r.desc.Kind.String())
	}
	return r, nil
}

func (r *remote) Desc() provider.JettyDesc { return r.desc }

func (r *remote) Close() error {
	r.ctx.closeMu.RLock()
	defer r.ctx.closeMu.RUnlock()
	if r.closed.Load() {
		return errClosed("remote")
	}
	r.ctx.disown(r)
	r.destroy()
	return nil
}

func (r *remote) destroy()    { r.closed.Store(true) }
func (r *remote) rank() int   { return objtab.RankMemory }
func (j *jettyObj) rank() int { return objtab.RankSend }

// jettyObj is a send queue plus a receive queue under one id.
type jettyObj struct {
	*sendq
	rq     *recvq
	shared *jfrObj
	ep     *endpoint
	bound  *remote
	// group is the jetty group the Jetty is a member of, nil for none.
	group *jgroup.Group
}

func (c *lbContext) NewJetty(cfg provider.JettyConfig) (provider.Jetty, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	q, err := c.newSendq(cfg.Send)
	if err != nil {
		return nil, err
	}
	j := &jettyObj{sendq: q}
	q.jetty = j
	desc := provider.JettyDesc{Kind: provider.KindJetty, Mode: cfg.Send.Mode}
	var token uint32
	if cfg.SharedJFR != nil {
		s, ok := cfg.SharedJFR.(*jfrObj)
		if !ok || s.ctx != c {
			q.jfc.users.Add(-1)
			return nil, provider.Errorf(provider.ErrInvalid, "shared jfr of another context or provider")
		}
		if s.closed.Load() {
			q.jfc.users.Add(-1)
			return nil, errClosed("shared jfr")
		}
		if s.mode != cfg.Send.Mode {
			q.jfc.users.Add(-1)
			return nil, provider.Errorf(provider.ErrInvalid, "shared jfr is %v, jetty is %v", s.mode, cfg.Send.Mode)
		}
		j.shared, j.rq = s, s.recvq
		desc.TokenPolicy, token = s.tokenPolicy, s.token
		s.sharers.Add(1)
	} else {
		cfg.Recv.Mode = cfg.Send.Mode
		rq, err := c.newRecvq(cfg.Recv)
		if err != nil {
			q.jfc.users.Add(-1)
			return nil, err
		}
		rq.crFlags = provider.CRFlagJetty
		rq.limit = rxLimit{ev: provider.EventJettyLimit, src: &q.src}
		j.rq = rq
		desc.TokenPolicy, token = cfg.Recv.TokenPolicy, cfg.Recv.Token
	}
	q.src.Owner = cfg.Owner
	if q.src.Owner == nil {
		q.src.Owner = j
	}
	if q.id, err = c.adopt(j); err != nil {
		j.release()
		return nil, err
	}
	if j.shared == nil {
		j.rq.setID(q.id)
	}
	desc.ID = c.jettyID(q.id)
	j.ep = &endpoint{desc: desc, token: token, rq: j.rq, jetty: j}
	c.addEndpoint(j.ep)
	c.registerSendq(q)
	if cfg.Group != nil {
		if err := c.joinGroup(j, cfg.Group, token); err != nil {
			c.disown(j)
			j.destroy()
			return nil, err
		}
	}
	return j, nil
}

func (j *jettyObj) PostRecv(wrs []provider.RecvWR) (int, error) {
	if j.closed.Load() {
		return 0, errClosed("jetty")
	}
	return j.rq.postRecv(wrs)
}

func (j *jettyObj) Desc() provider.JettyDesc { return j.ep.desc }

func (j *jettyObj) Bind(ctx context.Context, p provider.Remote) error {
	if j.closed.Load() {
		return errClosed("jetty")
	}
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	r, err := j.ctx.ownRemote(p)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.mode != provider.RC:
		return provider.Errorf(provider.ErrInvalid, "bind needs an RC jetty, this one is %v", j.mode)
	case r.desc.Kind != provider.KindJetty || r.desc.Mode != provider.RC:
		return provider.Errorf(provider.ErrInvalid, "bind needs a remote RC jetty, got %v", r.desc)
	case j.bound != nil:
		return provider.Errorf(provider.ErrExist, "jetty is already bound to %v", j.bound.desc.ID)
	}
	j.bound = r
	return nil
}

func (j *jettyObj) Unbind() error {
	if j.closed.Load() {
		return errClosed("jetty")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.bound == nil {
		return provider.Errorf(provider.ErrInvalid, "jetty is not bound")
	}
	j.bound = nil
	return nil
}

func (j *jettyObj) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if err := j.closeQ(); err != nil {
		return err
	}
	j.ctx.disown(j)
	j.destroy()
	return nil
}

func (j *jettyObj) destroy() {
	if j.sendq.closed.Load() {
		return
	}
	if j.group != nil {
		j.group.Leave(j.id)
	}
	j.ctx.removeEndpoint(j.id)
	j.sendq.destroy()
	j.release()
}

func (j *jettyObj) release() {
	if j.shared != nil {
		j.shared.sharers.Add(-1)
	} else {
		j.rq.destroy()
	}
}
