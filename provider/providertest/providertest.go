// Package providertest is the conformance suite every URMA provider must
// pass. It checks the contract of docs/semantics.md case by case: one
// subtest per opcode, scatter/gather and inline data, fences, signaled and
// unsignaled requests, post-time validation, transport-mode rules, failure
// completions (remote access errors, RNR, short receive buffers, JFC
// overrun, full queues, flush), segment and token rules, completion events
// and async events, and object lifecycle. Each subtest asserts the bytes that
// moved (and the bytes around them that must not) and every defined field of
// the completion records.
//
// The suite drives providers only through the public packages urma,
// segment and jetty, so the same code runs on the loopback provider and on
// a verbs device.
//
// # Using it from a provider
//
// A provider adds one test, in its own directory, that calls Run with a
// Harness whose Pair opens two contexts that can reach each other:
//
//	package mydriver_test
//
//	import (
//		"testing"
//
//		_ "example.com/mydriver" // registers the provider
//		"github.com/urma-go/sdk/provider/providertest"
//		"github.com/urma-go/sdk/urma"
//	)
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.Harness{
//			Pair: func(t testing.TB) (*urma.Context, *urma.Context) {
//				dev, err := urma.DeviceByName("mydev0")
//				if err != nil {
//					t.Fatal(err)
//				}
//				a, err := urma.Open(dev, 0, nil)
//				if err != nil {
//					t.Fatal(err)
//				}
//				b, err := urma.Open(dev, 0, nil)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return a, b
//			},
//		})
//	}
//
// Pair is called once per subtest, and again by the bad-input cases that
// need contexts they can close, from parallel subtests, so it must be safe
// for concurrent use. The two contexts may be on one device
// (one or two EIDs) or on two devices of one fabric. The suite closes both
// with t.Cleanup and fails the subtest if Close errs or hangs; a Pair that
// also registers its own cleanup is harmless, Close being idempotent.
//
// Run a single case with go test's -run flag, e.g.
// -run 'TestConformance/failure/queue_full'.
//
// # Capabilities
//
// What differs between devices is read from the initiator's device
// attributes (ctx.Device().Attr()): AtomicOps, Modes, MaxJFSSGE, MaxJFRSGE,
// MaxInline, MaxMsgSize and the depth limits. A case for a capability the
// device does not declare is not skipped: it checks that the device refuses
// it as the contract says (an atomic opcode outside AtomicOps is refused by
// Post with ErrNotSupported, a mode outside Modes by NewJFS or NewJetty with
// ErrNotSupported, more SGEs or inline bytes than declared with ErrInvalid).
//
// # Robustness
//
// Every wait for a completion or an event is bounded by Harness.Timeout and
// fails the subtest rather than hanging. A panic inside the provider fails
// the subtest that caused it, with the stack, instead of ending the run.
package providertest

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/kstack"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Harness tells the suite how to reach the provider under test.
type Harness struct {
	// Pair opens two contexts that can reach each other: the initiator, on
	// which requests are posted, and the target, which owns the remote
	// memory and receive queues. It is called at least once per subtest,
	// possibly concurrently, and reports failures through t. The suite
	// closes both contexts with t.Cleanup.
	Pair func(t testing.TB) (initiator, target *urma.Context)
	// Timeout bounds every wait for a completion, an event or a Close; zero
	// means 10 s. Raise it for emulated devices.
	Timeout time.Duration
}

// Run runs the whole suite as subtests of t, grouped by concern (opcode,
// sgl, mixed memory, bounds, validation, mode, failure, segment, event, lifecycle, badinput,
// prepared, prepared receives, postafter, postwhen, lockfree, stats).
// prepared, prepared receives, postafter, postwhen, lockfree, mapped, notify and
// invalidate, knobs, ping).
// prepared, prepared receives, postafter, postwhen, lockfree, groups).
// The cases run in parallel, each on its own pair of contexts from h.Pair.
func Run(t *testing.T, h Harness) {
	if h.Timeout == 0 {
		h.Timeout = 10 * time.Second
	}
	groups := []struct {
		name  string
		tests []test
	}{
		{"opcode", opcodeTests},
		{"sgl", sglTests},
		{"mixed memory", mixedMemTests},
		{"bounds", boundsTests},
		{"validation", validationTests},
		{"mode", modeTests},
		{"failure", failureTests},
		{"segment", segmentTests},
		{"event", eventTests},
		{"lifecycle", lifecycleTests},
		{"imports", importTests},
		{"badinput", badInputTests},
		{"prepared", preparedTests},
		{"repeated posts", repeatTests},
		{"prepared receives", preparedRecvTests},
		{"postafter", postAfterTests},
		{"postwhen", postWhenTests},
		{"lockfree", lockFreeTests},
		// Mapped imports (segment.Target.Map).
		{"mapped", mappedTests},
		// WRITE_NOTIFY and SEND_INVALIDATE.
		{"notify and invalidate", extOpTests},
		// Optional queue knobs (knobs.go).
		{"knobs", knobTests},
		// Counters (stats.go).
		{"stats", statsTests},
		// ping: a round trip answered by the target's provider.
		{"ping", pingTests},

		{"groups", groupTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					e := newEnv(t, h)
					defer func() {
						// A provider that panics fails its test instead of
						// taking the whole suite down.
						if r := recover(); r != nil {
							t.Fatalf("provider panicked: %v\n%s", r, debug.Stack())
						}
					}()
					tc.run(t, e)
				})
			}
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T, e *env)
}

// env is one test's pair of contexts and a few helpers over them.
type env struct {
	t       *testing.T
	a, b    *urma.Context
	attr    urma.DeviceAttr
	timeout time.Duration
	// pair is Harness.Pair, for tests that need contexts they can close
	// without losing a and b.
	pair func(t testing.TB) (*urma.Context, *urma.Context)
}

func newEnv(t *testing.T, h Harness) *env {
	a, b := h.Pair(t)
	require.NotNil(t, a)
	require.NotNil(t, b)
	t.Cleanup(func() {
		closeWithin(t, h.Timeout, "initiator context", a.Close)
		closeWithin(t, h.Timeout, "target context", b.Close)
	})
	return &env{t: t, a: a, b: b, attr: a.Device().Attr(), timeout: h.Timeout, pair: h.Pair}
}

// closeWithin runs a Close and fails the test if it errs or does not return
// within d, so a provider that hangs in Close does not hang the suite.
func closeWithin(t testing.TB, d time.Duration, what string, closeFn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- closeFn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("close %s: %v", what, err)
		}
	case <-time.After(d):
		// Where the Close is stuck is the useful part of the report:
		// a Close stuck in a system call is stuck in the driver.
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("close %s did not return within %v; goroutines:\n%s%s", what, d, buf, kstack.Threads())
	}
}

func (e *env) seg(ctx *urma.Context, size uint64, access segment.Access) *segment.Segment {
	s, err := segment.Alloc(ctx, size, segment.Config{Access: access})
	require.NoError(e.t, err)
	return s
}

// remoteSeg allocates a segment on the target and imports it into the
// initiator.
func (e *env) remoteSeg(size uint64, access segment.Access) (*segment.Segment, *segment.Target) {
	s := e.seg(e.b, size, access)
	tg, err := segment.Import(e.t.Context(), e.a, s.Descriptor(), 0)
	require.NoError(e.t, err)
	return s, tg
}

func (e *env) jfc(ctx *urma.Context, depth int) *jetty.JFC {
	j, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: depth})
	require.NoError(e.t, err)
	return j
}

// sendSide is an initiator JFS with its JFC.
type sendSide struct {
	jfs *jetty.JFS
	jfc *jetty.JFC
}

func (e *env) sender(cfg jetty.JFSConfig) sendSide {
	if cfg.JFC == nil {
		cfg.JFC = e.jfc(e.a, 0)
	}
	j, err := jetty.NewJFS(e.a, cfg)
	require.NoError(e.t, err)
	return sendSide{j, cfg.JFC}
}

// recvSide is a target JFR with its JFC and its import on the initiator.
type recvSide struct {
	jfr    *jetty.JFR
	jfc    *jetty.JFC
	remote *jetty.Remote
}

func (e *env) receiver(cfg jetty.JFRConfig) recvSide {
	if cfg.JFC == nil {
		cfg.JFC = e.jfc(e.b, 0)
	}
	j, err := jetty.NewJFR(e.b, cfg)
	require.NoError(e.t, err)
	r, err := jetty.ImportJFR(e.t.Context(), e.a, j.Descriptor(), cfg.Token)
	require.NoError(e.t, err)
	return recvSide{j, cfg.JFC, r}
}

// poll waits for exactly n records, failing the test at the timeout.
func (e *env) poll(jfc *jetty.JFC, n int) []jetty.CR {
	e.t.Helper()
	out := make([]jetty.CR, 0, n)
	buf := make([]jetty.CR, 16)
	deadline := time.Now().Add(e.timeout)
	for len(out) < n {
		k, err := jfc.Poll(buf[:min(len(buf), n-len(out))])
		require.NoError(e.t, err)
		out = append(out, buf[:k]...)
		if k == 0 {
			if time.Now().After(deadline) {
				e.t.Fatalf("timed out with %d of %d completion records: %v", len(out), n, out)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	return out
}

// pollOK waits for one record and checks it succeeded.
func (e *env) pollOK(jfc *jetty.JFC) jetty.CR {
	e.t.Helper()
	cr := e.poll(jfc, 1)[0]
	require.Equal(e.t, urma.CRSuccess, cr.Status, "%v", cr)
	return cr
}

// none checks that no record is waiting, after giving one a moment to appear.
func (e *env) none(jfc *jetty.JFC) {
	e.t.Helper()
	time.Sleep(20 * time.Millisecond)
	buf := make([]jetty.CR, 4)
	n, err := jfc.Poll(buf)
	require.NoError(e.t, err)
	require.Zero(e.t, n, "unexpected records: %v", buf[:n])
}

func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

// callerBuf returns n zeroed bytes of caller memory for segment.Register on
// ctx. A context whose provider cannot register memory of this process (the
// proxy of a context in another process, see package remote) offers memory
// it can register through CallerMemory; any other gets a plain Go slice.
func (e *env) callerBuf(ctx *urma.Context, n int) []byte {
	e.t.Helper()
	if m, ok := ctx.Raw().(interface{ CallerMemory(int) ([]byte, error) }); ok {
		b, err := m.CallerMemory(n)
		require.NoError(e.t, err)
		return b
	}
	return make([]byte, n)
}

// remoteSegTarget is remoteSeg for tests that need only the import.
func (e *env) remoteSegTarget(size uint64) *segment.Target {
	_, tg := e.remoteSeg(size, segment.Read)
	return tg
}
