package jetty

import (
	"context"
	"errors"
	"testing"
	"time"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// sendPair is a JFR on one context (its JFC in event mode) and a JFS on
// another that can send to it.
type sendPair struct {
	uctx *urma.Context
	rjfc *JFC
	jfr  *JFR
	buf  *segment.Segment
	send func() error
}

func newSendPair(t *testing.T, event bool) *sendPair {
	t.Helper()
	dev, err := urma.DeviceByName("loopback0")
	check(t, err)
	a, err := urma.Open(dev, 0, nil)
	check(t, err)
	t.Cleanup(func() { a.Close() })
	b, err := urma.Open(dev, 1, nil)
	check(t, err)
	t.Cleanup(func() { b.Close() })
	var cfg JFCConfig
	if event {
		cfg.JFCE, err = NewJFCE(a)
		check(t, err)
	}
	p := &sendPair{uctx: a}
	p.rjfc, err = NewJFC(a, cfg)
	check(t, err)
	p.jfr, err = NewJFR(a, JFRConfig{JFC: p.rjfc})
	check(t, err)
	p.buf, err = segment.Alloc(a, 64, segment.Config{Access: segment.LocalOnly})
	check(t, err)
	sjfc, err := NewJFC(b, JFCConfig{})
	check(t, err)
	jfs, err := NewJFS(b, JFSConfig{JFC: sjfc})
	check(t, err)
	to, err := ImportJFR(t.Context(), b, p.jfr.Descriptor(), 0)
	check(t, err)
	msg, err := segment.Alloc(b, 64, segment.Config{Access: segment.LocalOnly})
	check(t, err)
	p.send = func() error { return jfs.Send(to, msg.SGE(0, 8), 0, 7) }
	return p
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (p *sendPair) recv(t *testing.T) {
	t.Helper()
	check(t, p.jfr.Recv(p.buf.SGE(0, 64), 3))
}

// sendLater sends after d on another goroutine.
func (p *sendPair) sendLater(t *testing.T, d time.Duration) {
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		time.Sleep(d)
		if err := p.send(); err != nil {
			t.Error(err)
		}
	}()
}

func TestPollWaitSpinsThenParks(t *testing.T) {
	p := newSendPair(t, true)
	crs := make([]CR, 4)
	ctx := context.Background()

	// A record that arrives within the spin budget is taken without a
	// sleep on the JFCE.
	p.recv(t)
	p.sendLater(t, 20*time.Millisecond)
	n, err := p.rjfc.PollWait(ctx, crs, time.Minute)
	check(t, err)
	if n != 1 || !crs[0].OK() || crs[0].UserCtx != 3 || crs[0].Flags&CRRecv == 0 {
		t.Fatalf("got %d records, first %v", n, crs[0])
	}
	if k := p.rjfc.parks.Load(); k != 0 {
		t.Fatalf("parked %d times within the spin budget", k)
	}

	// With no budget it parks at once, and the event wakes it.
	p.recv(t)
	p.sendLater(t, 20*time.Millisecond)
	n, err = p.rjfc.PollWait(ctx, crs, 0)
	check(t, err)
	if n != 1 || !crs[0].OK() {
		t.Fatalf("got %d records, first %v", n, crs[0])
	}
	if p.rjfc.parks.Load() == 0 {
		t.Fatal("did not park without a spin budget")
	}
	// The wake's event was acknowledged: the JFC closes.
	check(t, p.jfr.Close())
	check(t, p.rjfc.Close())
}

func TestPollWaitReturnsReadyRecordsAtOnce(t *testing.T) {
	p := newSendPair(t, true)
	p.recv(t)
	p.recv(t)
	check(t, p.send())
	check(t, p.send())
	crs := make([]CR, 4)
	n, err := p.rjfc.PollWait(context.Background(), crs, 0)
	check(t, err)
	if n == 0 || p.rjfc.parks.Load() != 0 {
		t.Fatalf("got %d records after %d parks, want some after none", n, p.rjfc.parks.Load())
	}
	// The second SEND went to the receive queue's inbox (a stream) and
	// is normally delivered by the same poll; a sender that holds the
	// inbox at that moment delivers it as a record an instant later, so
	// a slow machine may see one record short at first.
	deadline := time.Now().Add(5 * time.Second)
	for n < 2 && time.Now().Before(deadline) {
		k, err := p.rjfc.Poll(crs[n:])
		check(t, err)
		n += k
	}
	if n != 2 {
		t.Fatalf("got %d records in all, want 2", n)
	}
	for _, cr := range crs[:n] {
		if !cr.OK() {
			t.Fatalf("record %v", cr)
		}
	}
}

func TestPollWaitEndsWithItsContext(t *testing.T) {
	for _, event := range []bool{false, true} {
		p := newSendPair(t, event)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		n, err := p.rjfc.PollWait(ctx, make([]CR, 1), time.Millisecond)
		cancel()
		if n != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("event %v: got %d, %v; want context.DeadlineExceeded", event, n, err)
		}
	}
}

func TestPollWaitPollingModeKeepsSpinning(t *testing.T) {
	p := newSendPair(t, false)
	p.recv(t)
	p.sendLater(t, 20*time.Millisecond)
	crs := make([]CR, 1)
	// spinFor is only a budget before a sleep; without a JFCE there is
	// nothing to sleep on.
	n, err := p.rjfc.PollWait(context.Background(), crs, time.Microsecond)
	check(t, err)
	if n != 1 || !crs[0].OK() || p.rjfc.parks.Load() != 0 {
		t.Fatalf("got %d records (%v) after %d parks", n, crs[0], p.rjfc.parks.Load())
	}
}

func TestPollWaitNeedsRoom(t *testing.T) {
	p := newSendPair(t, false)
	if _, err := p.rjfc.PollWait(context.Background(), nil, 0); !errors.Is(err, urma.ErrInvalid) {
		t.Fatalf("got %v, want urma.ErrInvalid", err)
	}
}

// TestPollWaitOnASharedJFCE: PollWait sleeps on a JFCE that another JFC
// shares, with a waiter of its own, and each gets its own event.
func TestPollWaitOnASharedJFCE(t *testing.T) {
	p := newSendPair(t, true)
	other, err := NewJFC(p.uctx, JFCConfig{JFCE: p.rjfc.jfce})
	check(t, err)
	defer other.Close()
	check(t, other.Rearm(false))
	otherDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		otherDone <- other.Wait(ctx)
	}()
	p.recv(t)
	p.sendLater(t, 20*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	crs := make([]CR, 1)
	n, err := p.rjfc.PollWait(ctx, crs, 0)
	check(t, err)
	if n != 1 || crs[0].UserCtx != 3 || !crs[0].OK() {
		t.Fatalf("got %d records, %v", n, crs[0])
	}
	if err := <-otherDone; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the other JFC's waiter: %v, want its deadline (no event of its own)", err)
	}
	if p.rjfc.parks.Load() == 0 {
		t.Fatal("PollWait did not sleep on the JFCE")
	}
}
