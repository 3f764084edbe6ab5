package remote

import "github.com/urma-go/sdk/provider"

// The queue knobs on the wire: a send queue's with its config, the
// receive threshold with its config and by its own request.

type sendKnobs struct {
	ErrorSuspend bool
	Order        provider.OrderType
	ErrTimeout   uint8
}

func sendKnobsOf(c provider.JFSConfig) sendKnobs {
	return sendKnobs{ErrorSuspend: c.ErrorSuspend, Order: c.Order, ErrTimeout: c.ErrTimeout}
}

func (k sendKnobs) fill(c *provider.JFSConfig) {
	c.ErrorSuspend, c.Order, c.ErrTimeout = k.ErrorSuspend, k.Order, k.ErrTimeout
}

type thresholdArgs struct {
	H uint64
	N int
}

var rpcSetRxThreshold = rpc[thresholdArgs, empty]{opSetRxThreshold}

func init() { serve(rpcSetRxThreshold, (*session).setRxThreshold) }

// setRxThreshold is the peer's side: a provider without thresholds
// refuses, as it would in this process.
func (s *session) setRxThreshold(a *thresholdArgs) (*empty, error) {
	q, err := get[any](s, a.H, "queue")
	if err != nil {
		return nil, err
	}
	t, ok := q.(provider.RxThresholder)
	if !ok {
		return nil, provider.Errorf(provider.ErrNotSupported, "the provider has no receive threshold")
	}
	return nil, t.SetRxThreshold(a.N)
}

func (q *queue) setRxThreshold(n int) error {
	_, err := rpcSetRxThreshold.call(q.p.c, &thresholdArgs{H: q.h, N: n})
	return err
}

func (j *pJFR) SetRxThreshold(n int) error   { return j.setRxThreshold(n) }
func (j *pJetty) SetRxThreshold(n int) error { return j.setRxThreshold(n) }
