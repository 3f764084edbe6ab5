package jetty

import (
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urma-go/sdk/urma"
)

// Every blocking wait ends promptly when its context does, with one error
// convention: a deadline matches context.DeadlineExceeded and
// urma.ErrTimeout, a cancel context.Canceled, a Close during the wait
// net.ErrClosed. A wait that looked at its context only now and then (a
// tick of some milliseconds) would end a typical wait that long late:
// the median is held to a bound such a tick cannot meet. A single wait
// can still end late on a loaded machine (its thread off its core), so
// the 99th percentile is only logged, and held to a bound that a wait
// that missed its context entirely (ending at the next event, or never)
// cannot meet.

// waitLatency runs wait 100 times with a context that ends after 5 ms,
// by deadline or by cancel, and returns the sorted delays between the
// moment ctx.Done closed (seen by a context.AfterFunc, so that the timer's
// own lateness is not counted) and wait's return, failing on a wrong
// error.
func waitLatency(t *testing.T, name string, byCancel bool, wait func(ctx context.Context) error) []time.Duration {
	t.Helper()
	const runs, after = 100, 5 * time.Millisecond
	late := make([]time.Duration, 0, runs)
	for range runs {
		var ctx context.Context
		var cancel context.CancelFunc
		if byCancel {
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(after, cancel)
		} else {
			ctx, cancel = context.WithTimeout(context.Background(), after)
		}
		var ended atomic.Int64
		context.AfterFunc(ctx, func() { ended.Store(time.Now().UnixNano()) })
		err := wait(ctx)
		returned := time.Now().UnixNano()
		cancel()
		for ended.Load() == 0 {
			runtime.Gosched()
		}
		late = append(late, time.Duration(max(0, returned-ended.Load())))
		want := context.DeadlineExceeded
		if byCancel {
			want = context.Canceled
		}
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", name, err, want)
		}
		if !byCancel && !errors.Is(err, urma.ErrTimeout) {
			t.Fatalf("%s: %v does not match urma.ErrTimeout", name, err)
		}
	}
	slices.Sort(late)
	return late
}

func TestWaitsEndWithTheirContext(t *testing.T) {
	p := newSendPair(t, true)
	poll := newSendPair(t, false)
	check(t, p.rjfc.Rearm(false))
	waits := []struct {
		name string
		wait func(ctx context.Context) error
	}{
		{"JFCE.Wait", func(ctx context.Context) error {
			_, err := p.rjfc.jfce.Wait(ctx, make([]*JFC, 1))
			return err
		}},
		{"JFC.Wait", p.rjfc.Wait},
		{"PollWait, event mode", func(ctx context.Context) error {
			_, err := p.rjfc.PollWait(ctx, make([]CR, 1), 0)
			return err
		}},
		{"PollWait, polling mode", func(ctx context.Context) error {
			_, err := poll.rjfc.PollWait(ctx, make([]CR, 1), 0)
			return err
		}},
		{"GetAsyncEvent", func(ctx context.Context) error {
			_, err := p.uctx.GetAsyncEvent(ctx)
			return err
		}},
	}
	for _, w := range waits {
		for _, byCancel := range []bool{false, true} {
			how := map[bool]string{false: "deadline", true: "cancel"}[byCancel]
			late := waitLatency(t, w.name+", "+how, byCancel, w.wait)
			median, p99 := late[len(late)/2], late[len(late)*99/100-1]
			t.Logf("%s, %s: median %v, p99 %v after the context ended", w.name, how, median, p99)
			if median > 5*time.Millisecond || p99 > time.Second {
				t.Errorf("%s, %s: median %v, p99 %v after the context ended", w.name, how, median, p99)
			}
		}
	}
}

func TestCloseEndsAWait(t *testing.T) {
	dev, err := urma.DeviceByName("loopback0")
	check(t, err)
	uctx, err := urma.Open(dev, 0, nil)
	check(t, err)
	defer uctx.Close()
	ce, err := NewJFCE(uctx)
	check(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := ce.Wait(context.Background(), make([]*JFC, 1))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	check(t, ce.Close())
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) || !errors.Is(err, urma.ErrClosed) {
			t.Fatalf("wait ended by Close: %v, want net.ErrClosed and urma.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the wait")
	}
}
