package jetty

import (
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// errTimeoutUnit is UMDK's err_timeout step: code n waits 4.096us*2^n.
const errTimeoutUnit = 4096 * time.Nanosecond

// maxErrTimeoutCode is the largest err_timeout code.
const maxErrTimeoutCode = 31

// knobs checks the send queue knobs of c and fills them into pc.
func (c JFSConfig) knobs(pc *provider.JFSConfig) error {
	if c.Order > urma.OrderNO {
		return provider.Errorf(urma.ErrInvalid, "unknown order type %d", uint8(c.Order))
	}
	code, err := ErrTimeoutCode(c.ErrTimeout)
	if err != nil {
		return err
	}
	pc.ErrorSuspend, pc.Order = c.ErrorSuspend, provider.OrderType(c.Order)
	if c.ErrTimeout != 0 {
		pc.ErrTimeout = code + 1
	}
	return nil
}

// ErrTimeoutCode is UMDK's err_timeout code for d: the smallest n, from 0
// to 31, whose 4.096us*2^n is at least d. It refuses a negative d, or one
// beyond 4.096us*2^31, with urma.ErrInvalid.
func ErrTimeoutCode(d time.Duration) (uint8, error) {
	if d < 0 || d > errTimeoutUnit<<maxErrTimeoutCode {
		return 0, provider.Errorf(urma.ErrInvalid, "err timeout %v, 0..%v", d, errTimeoutUnit<<maxErrTimeoutCode)
	}
	var n uint8
	for errTimeoutUnit<<n < d {
		n++
	}
	return n, nil
}

// rxThreshold is the provider's threshold setter of a receive queue.
func rxThreshold(p any, kind string, n int) error {
	t, ok := p.(provider.RxThresholder)
	if !ok {
		return opErr(kind+" set rx threshold", provider.Errorf(urma.ErrNotSupported, "the provider has no receive threshold (DeviceAttr.RxThreshold is false)"))
	}
	if n < 0 {
		return opErr(kind+" set rx threshold", provider.Errorf(urma.ErrInvalid, "rx threshold %d is negative", n))
	}
	if err := t.SetRxThreshold(n); err != nil {
		return opErr(kind+" set rx threshold", err)
	}
	return nil
}

// SetRxThreshold arms the JFR's receive threshold (urma_modify_jfr with
// JFR_RX_THRESHOLD; DeviceAttr.RxThreshold): once a message leaves fewer
// than n receives posted, the context raises one urma.EventJFRLimit, as a
// verbs SRQ raises SRQ_LIMIT_REACHED, and the threshold is disarmed. Set
// it again to hear of the next time. A threshold armed while fewer than n
// receives are posted fires at the next message. Zero disarms it; n above
// the queue's depth is refused with urma.ErrInvalid, and a provider
// without thresholds refuses any n with urma.ErrNotSupported.
func (j *JFR) SetRxThreshold(n int) error { return rxThreshold(j.p, "jfr", n) }

// SetRxThreshold arms the receive threshold of the Jetty's own receive
// queue (urma_modify_jetty with JETTY_RX_THRESHOLD): as JFR.SetRxThreshold,
// with urma.EventJettyLimit. A Jetty on a shared JFR refuses it with
// urma.ErrInvalid: the JFR's threshold is the JFR's own.
func (j *Jetty) SetRxThreshold(n int) error { return rxThreshold(j.p, "jetty", n) }
