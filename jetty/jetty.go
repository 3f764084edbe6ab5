package jetty

import (
	"context"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// JettyConfig configures a Jetty: its send side, and either its own receive
// queue (Recv) or a SharedJFR. Recv.Mode defaults to Send.Mode.
type JettyConfig struct {
	Send      JFSConfig
	Recv      JFRConfig
	SharedJFR *JFR

	// Group, when set, is the jetty group the Jetty joins (jetty_grp); it
	// leaves it when closed. The Jetty must be RM and receive with the
	// group's token policy and token.
	Group *JettyGroup
}

// Jetty is a send queue and a receive queue under one id (urma_jetty_t). In
// RC mode it is bound to exactly one remote Jetty with Bind.
type Jetty struct {
	sender
	receiver
	p   provider.Jetty
	ctx *urma.Context
	// sendDepth and recvDepth are what the Jetty takes of its JFCs'
	// room (recvDepth 0 with a shared JFR, which took its own).
	sendDepth, recvDepth int
	closer               closer
}

// NewJetty creates a Jetty.
func NewJetty(uctx *urma.Context, cfg JettyConfig) (*Jetty, error) {
	if uctx == nil {
		return nil, opErr("create jetty", provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	j := &Jetty{ctx: uctx}
	sc, err := cfg.Send.provider(uctx, j)
	if err != nil {
		return nil, opErr("create jetty", err)
	}
	pc := provider.JettyConfig{Send: sc, Owner: j}
	if cfg.SharedJFR != nil {
		pc.SharedJFR = cfg.SharedJFR.p
		j.receiver.jfc = cfg.SharedJFR.receiver.jfc
	} else {
		if cfg.Recv.Mode == 0 {
			cfg.Recv.Mode = urma.TransportMode(sc.Mode)
		}
		if cfg.Recv.JFC == nil {
			cfg.Recv.JFC = cfg.Send.JFC
		}
		rc, err := cfg.Recv.provider(uctx, j)
		if err != nil {
			return nil, opErr("create jetty", err)
		}
		pc.Recv = rc
		j.receiver.jfc = cfg.Recv.JFC
	}
	if err := cfg.Send.JFC.take(sc.Depth, "Jetty's send queue"); err != nil {
		return nil, opErr("create jetty", err)
	}
	if cfg.SharedJFR == nil {
		if err := cfg.Recv.JFC.take(pc.Recv.Depth, "Jetty's receive queue"); err != nil {
			cfg.Send.JFC.give(sc.Depth)
			return nil, opErr("create jetty", err)
		}
		j.recvDepth = pc.Recv.Depth
	}
	j.sendDepth = sc.Depth
	if cfg.Group != nil {
		if pc.Group, err = cfg.Group.member(uctx); err != nil {
			cfg.Send.JFC.give(sc.Depth)
			if j.recvDepth > 0 {
				cfg.Recv.JFC.give(j.recvDepth)
			}
			return nil, opErr("create jetty", err)
		}
	}
	p, err := uctx.Raw().NewJetty(pc)
	if err != nil {
		cfg.Send.JFC.give(sc.Depth)
		if j.recvDepth > 0 {
			cfg.Recv.JFC.give(j.recvDepth)
		}
		return nil, opErr("create jetty", err)
	}
	j.p = p
	j.sender.p, j.sender.kind, j.sender.jfc = p, "jetty", cfg.Send.JFC
	j.receiver.post, j.receiver.kind = p.PostRecv, "jetty"
	j.receiver.prep, _ = p.(provider.RecvPreparer)
	return j, nil
}

// Descriptor returns what a peer needs to import this Jetty.
func (j *Jetty) Descriptor() Descriptor { return DescriptorOf(j.p.Desc()) }

// Bind connects an RC Jetty to one remote Jetty (urma_bind_jetty); requests
// then go there without WR.To. The remote Jetty binds to this one the same
// way, even at the same moment: both ends then share one connection. ctx
// bounds the connection; once ctx is done Bind returns its error, unbound.
func (j *Jetty) Bind(ctx context.Context, r *Remote) error {
	if r == nil {
		return opErr("jetty bind", provider.Errorf(urma.ErrInvalid, "nil remote"))
	}
	if err := j.p.Bind(ctx, r.ref.Remote); err != nil {
		return opErr("jetty bind", err)
	}
	return nil
}

// Unbind undoes Bind (urma_unbind_jetty).
func (j *Jetty) Unbind() error {
	if err := j.p.Unbind(); err != nil {
		return opErr("jetty unbind", err)
	}
	return nil
}

// Context is the context the Jetty was created in.
func (j *Jetty) Context() *urma.Context { return j.ctx }

// Raw returns the provider's Jetty.
func (j *Jetty) Raw() provider.Jetty { return j.p }

// Close deletes the Jetty (urma_delete_jetty). Idempotent and nil-safe.
func (j *Jetty) Close() error {
	if j == nil {
		return nil
	}
	return j.closer.close("delete jetty", closeQueue(func() error {
		if err := closeQueue(j.p.Close, j.sender.jfc, j.sendDepth)(); err != nil {
			return err
		}
		if j.recvDepth > 0 {
			j.receiver.jfc.give(j.recvDepth)
		}
		return nil
	}, nil, 0))
}
