//go:build cgo && urma_verbs

package ib

import (
	"net/netip"
	"sync"
	"time"

	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// answerer is an rdma_cm listener that answers every connect request with
// a reject carrying answer's bytes and keeps nothing: the pings at
// PingPort and the urmanet ports. A request that does not parse gets
// replyInvalid.
type answerer struct {
	ch     *verbs.EventChannel
	w      *verbs.Waiter
	id     verbs.CMID
	answer func(request) []byte
	done   chan struct{}
	once   sync.Once
	// closed runs once after the listener is gone.
	closed func()
}

// listenAnswer starts an answerer at (a, port); name names its waiter.
func listenAnswer(a netip.Addr, port uint16, scope uint32, name string, answer func(request) []byte) (*answerer, error) {
	ch, w, id, err := cmListen(a, port, scope, 16, name)
	if err != nil {
		return nil, err
	}
	l := &answerer{ch: ch, w: w, id: id, answer: answer, done: make(chan struct{})}
	go l.loop()
	return l, nil
}

func (l *answerer) loop() {
	defer close(l.done)
	for {
		err := l.w.Wait(time.Time{}, func() bool {
			for {
				ev, ok, err := l.ch.GetEvent()
				if err != nil || !ok {
					return false
				}
				if ev.Type != verbs.CMConnectRequest {
					continue
				}
				var b []byte
				if req, err := parseRequest(ev.PrivateData); err != nil {
					b = (&reply{status: replyInvalid}).marshal()
				} else {
					b = l.answer(req)
				}
				_ = ev.ID.Reject(b)
				_ = ev.ID.Destroy()
			}
		})
		if err != nil {
			return
		}
	}
}

// Close stops answering; it is idempotent.
func (l *answerer) Close() error {
	l.once.Do(func() {
		_ = l.w.Close()
		<-l.done
		_ = l.id.Destroy()
		l.ch.Destroy()
		if l.closed != nil {
			l.closed()
		}
	})
	return nil
}
