package remote

import "github.com/urma-go/sdk/provider"

// The counters of the peer's queues and contexts (provider.StatsQueue and
// provider.StatsContext), forwarded as the other calls are.

var (
	rpcQueueStats   = rpc[hArgs, queueStatsReply]{opQueueStats}
	rpcContextStats = rpc[hArgs, contextStatsReply]{opContextStats}
)

type queueStatsReply struct{ S provider.QueueStats }

type contextStatsReply struct{ S provider.ContextStats }

func init() {
	serve(rpcQueueStats, (*session).queueStats)
	serve(rpcContextStats, (*session).contextStats)
}

func (s *session) queueStats(a *hArgs) (*queueStatsReply, error) {
	v, err := get[any](s, a.H, "queue")
	if err != nil {
		return nil, err
	}
	q, ok := v.(provider.StatsQueue)
	if !ok {
		return nil, provider.Errorf(provider.ErrNotSupported, "the peer's provider keeps no queue counters")
	}
	st, err := q.Stats()
	return &queueStatsReply{S: st}, err
}

func (s *session) contextStats(a *hArgs) (*contextStatsReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(provider.StatsContext)
	if !ok {
		return nil, provider.Errorf(provider.ErrNotSupported, "the peer's provider keeps no counters")
	}
	st, err := sc.Stats()
	return &contextStatsReply{S: st}, err
}

func (o *obj) Stats() (provider.QueueStats, error) {
	r, err := rpcQueueStats.call(o.p.c, &hArgs{H: o.h})
	return r.S, err
}

// Stats shadows obj's: a context's counters are another call.
func (c *pContext) Stats() (provider.ContextStats, error) {
	r, err := rpcContextStats.call(c.p.c, &hArgs{H: c.h})
	return r.S, err
}
