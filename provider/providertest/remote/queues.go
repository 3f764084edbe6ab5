package remote

import (
	"context"

	"github.com/urma-go/sdk/provider"
)

// queue is what JFS, JFR and Jetty proxies share: state and attributes,
// and the owner numbers their configs were given.
type queue struct {
	obj
	owners []uint64
}

func (q *queue) Query() (provider.QueueAttr, error) {
	r, err := rpcQuery.call(q.p.c, &hArgs{H: q.h})
	return r.Attr, err
}

func (q *queue) Modify(s provider.State) error {
	_, err := rpcModifyState.call(q.p.c, &stateArgs{H: q.h, State: s})
	return err
}

func (q *queue) Close() error {
	_, err := q.close(q.owners...)
	return err
}

// sendSide is the provider.Sender part of JFS and Jetty proxies.
type sendSide struct{ queue }

func (s *sendSide) Post(wrs []provider.WR) (int, error) {
	ws := make([]wr, len(wrs))
	bad, badErr := len(wrs), error(nil)
	for i := range wrs {
		var err error
		if ws[i], err = s.p.wireWR(&wrs[i]); err != nil {
			bad, badErr = i, err
			break
		}
	}
	return postUpTo(ws, bad, badErr, func(ws []wr) (int, error) {
		r, err := rpcPost.call(s.p.c, &postArgs{H: s.h, WRs: ws})
		return r.N, err
	})
}

func (s *sendSide) Flush(crs []provider.CR) (int, error) {
	r, err := rpcFlush.call(s.p.c, &countArgs{H: s.h, N: len(crs)})
	copy(crs, r.CRs)
	return r.N, err
}

// Advise and Bind check ctx before they ask the peer; the peer's own
// wait is bounded by its timeouts.
func (s *sendSide) Advise(ctx context.Context, r provider.Remote) error {
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	return s.withRemote(rpcAdvise, r)
}
func (s *sendSide) Unadvise(r provider.Remote) error { return s.withRemote(rpcUnadvise, r) }

func (s *sendSide) withRemote(call rpc[remoteArgs, empty], r provider.Remote) error {
	ref, err := s.p.remoteRef(r)
	if err != nil {
		return err
	}
	_, err = call.call(s.p.c, &remoteArgs{H: s.h, R: ref})
	return err
}

// postRecv is PostRecv of JFR and Jetty proxies.
func (o *obj) postRecv(wrs []provider.RecvWR) (int, error) {
	ws := make([]recvWR, len(wrs))
	bad, badErr := len(wrs), error(nil)
	for i := range wrs {
		local, err := o.p.wireSGEs(wrs[i].Local)
		if err != nil {
			bad, badErr = i, err
			break
		}
		ws[i] = recvWR{UserCtx: wrs[i].UserCtx, Local: local}
	}
	return postUpTo(ws, bad, badErr, func(ws []recvWR) (int, error) {
		r, err := rpcPostRecv.call(o.p.c, &postRecvArgs{H: o.h, WRs: ws})
		return r.N, err
	})
}

// pJFS is the proxy of a send queue.
type pJFS struct{ sendSide }

// pJFR is the proxy of a receive queue.
type pJFR struct {
	queue
	desc provider.JettyDesc
}

func (j *pJFR) PostRecv(wrs []provider.RecvWR) (int, error) { return j.postRecv(wrs) }
func (j *pJFR) Desc() provider.JettyDesc                    { return j.desc }

// pJetty is the proxy of a Jetty.
type pJetty struct {
	sendSide
	desc provider.JettyDesc
}

func (j *pJetty) PostRecv(wrs []provider.RecvWR) (int, error) { return j.postRecv(wrs) }
func (j *pJetty) Desc() provider.JettyDesc                    { return j.desc }

func (j *pJetty) Bind(ctx context.Context, r provider.Remote) error {
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	return j.withRemote(rpcBind, r)
}

func (j *pJetty) Unbind() error {
	_, err := rpcUnbind.call(j.p.c, &hArgs{H: j.h})
	return err
}

// jfsConfig and jfrConfig put a config on the wire: objects by handle, the
// Owner by number.
func (p *Peer) jfsConfig(c provider.JFSConfig) jfsConfig {
	return jfsConfig{Depth: c.Depth, Mode: c.Mode, MaxSGE: c.MaxSGE, MaxInline: c.MaxInline,
		RNRRetry: c.RNRRetry, RNRTimeout: c.RNRTimeout, JFC: p.handleOf(c.JFC), Owner: p.ownerID(c.Owner),
		Knobs: sendKnobsOf(c)}
}

func (p *Peer) jfrConfig(c provider.JFRConfig) jfrConfig {
	return jfrConfig{Depth: c.Depth, Mode: c.Mode, MaxSGE: c.MaxSGE, TokenPolicy: c.TokenPolicy,
		Token: c.Token, JFC: p.handleOf(c.JFC), Owner: p.ownerID(c.Owner), RxThreshold: c.RxThreshold}
}
