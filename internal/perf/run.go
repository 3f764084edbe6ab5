package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/internal/termsafe"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// Side is where one side runs and where it reports.
type Side struct {
	// Device is the device name; EID its EID index.
	Device string
	EID    int
	// Addr is the server's TCP address: where it listens, where the
	// client connects.
	Addr string
	// Progress, when set, gets a line a second during long runs.
	Progress io.Writer
	// Log gets the server's one-line notes (listening, client, done).
	Log io.Writer
}

// clientWait is how long a client tries to reach its server.
const clientWait = 10 * time.Second

// durationSamples bounds the latency samples of a -D run.
const durationSamples = 1 << 22

// Client runs cfg against the server at s.Addr and returns the report.
// With w set, the table is printed row by row as sizes finish.
func Client(ctx context.Context, cfg Config, s Side, w io.Writer) (*Report, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e, err := openEndpoint(s.Device, s.EID, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	c, err := dialOOB(ctx, s.Addr, clientWait, s.Log)
	if err != nil {
		return nil, err
	}
	ch := newOOB(ctx, c)
	defer ch.close()
	server := "perf server " + s.Addr
	mine, err := e.info()
	if err != nil {
		return nil, err
	}
	if err := ch.send(helloFor(cfg, mine)); err != nil {
		return nil, orCtx(ctx, err)
	}
	var wel welcome
	if err := ch.recv(&wel); err != nil {
		return nil, orCtx(ctx, blame(server, err))
	}
	if wel.Err != "" {
		return nil, serverSaid(wel.Err)
	}
	if err := e.connect(wel.endpointInfo); err != nil {
		return nil, err
	}
	rep := &Report{Test: cfg.Test.String(), Provider: e.ctx.Device().Provider(), Device: s.Device, Mode: modeName(cfg.Mode),
		Event: cfg.Event, Spin: cfg.Spin, Inline: e.inline, TxDepth: cfg.TxDepth, Duration: cfg.Duration,
		Tuned: cfg.Tuned, LockFree: e.lockFree}
	if cfg.Test.BW {
		rep.PostList, rep.CQMod = cfg.PostList, cfg.CQMod
	}
	if w != nil {
		rep.header(w, cfg.Test.BW)
	}
	var samples []int64
	if !cfg.Test.BW {
		n := cfg.Iters
		if cfg.Duration > 0 {
			n = durationSamples
		}
		samples = make([]int64, n+1)
	}
	for _, size := range cfg.Sizes {
		if err := clientSize(ctx, e, ch, size, samples, s.Progress, rep, w); err != nil {
			return rep, orCtx(ctx, blame(server, err))
		}
	}
	_ = ch.send(phase{Bye: true})
	if w != nil {
		rep.footer(w)
	}
	return rep, nil
}

// clientSize runs one size and adds its row to rep.
func clientSize(ctx context.Context, e *endpoint, ch *oob, size int, samples []int64,
	progress io.Writer, rep *Report, w io.Writer) error {
	cfg := e.cfg
	clear(e.seg.Bytes())
	var done atomic.Int64
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r, err := newRun(ctx, e, size, &done)
	if err != nil {
		return err
	}
	if cfg.Test.Op == Send {
		if err := r.fillRecvs(); err != nil {
			return err
		}
	}
	if err := ch.send(phase{Size: size}); err != nil {
		return err
	}
	var ack phase
	if err := ch.recv(&ack); err != nil {
		return err
	}
	if ack.Err != "" {
		return serverSaid(ack.Err)
	}
	total := cfg.Iters
	if cfg.Duration > 0 {
		total = 0
	}
	// The server's answer to "done" is read in the background: an error
	// it reports mid-run, or its going away, stops this side's loop.
	answers := make(chan answer, 1)
	go func() {
		var a answer
		a.err = ch.recv(&a.p)
		if a.err != nil || a.p.Err != "" {
			stop()
		}
		answers <- a
	}()
	// The server cannot tell warm-up from the timed run: it receives
	// until "done". A failed warm-up ends the size as a failed run does.
	var warmErr error
	if cfg.Test.BW && cfg.Warmup > 0 {
		if _, err := r.bwClient(cfg.Warmup); err != nil {
			warmErr = fmt.Errorf("warm-up: %w", err)
		}
	}
	if cfg.Duration > 0 {
		r.until = time.Now().Add(cfg.Duration)
	}
	endProgress := showProgress(progress, fmt.Sprintf("%s %d B", cfg.Test, size), total, &done)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	var lat LatResult
	var bw BWResult
	var iters int
	if warmErr != nil {
		err = warmErr
	} else if cfg.Test.BW {
		limit := cfg.Iters
		if cfg.Duration > 0 {
			limit = math.MaxInt
		}
		var o bwOutcome
		if o, err = r.bwClient(limit); err == nil {
			iters, bw = o.iters, bwResult(size, o)
		}
	} else if iters, err = r.latLoop(samples); err == nil {
		lat = latResult(size, samples[:iters], cfg.Test.halved())
	}
	runtime.ReadMemStats(&ms)
	endProgress()
	if err == nil {
		err = ch.send(phase{Done: true})
	}
	if err != nil && !errors.Is(err, errStopped) {
		return e.failed(err, answers)
	}
	a := <-answers
	switch {
	case errors.Is(a.err, errPeerClosed):
		// The server went away and stopped the loop; a request that
		// failed with it says how it looked from here.
		if cause := e.failedRecord(); cause != nil {
			return &goneError{cause}
		}
		return &goneError{a.err}
	case a.err != nil:
		return a.err
	case a.p.Err != "":
		return serverSaid(a.p.Err)
	case err != nil:
		return ctx.Err()
	}
	allocs := float64(ms.Mallocs-mallocs) / float64(max(iters, 1))
	if cfg.Test.BW {
		bw.AllocsPerOp = allocs
		rep.BW = append(rep.BW, bw)
		if w != nil {
			bwRow(w, bw)
		}
	} else {
		lat.AllocsPerOp = allocs
		rep.Latency = append(rep.Latency, lat)
		if w != nil {
			latRow(w, lat)
		}
	}
	return nil
}

// answer is the server's reply to the client's "done", or the error that
// came instead.
type answer struct {
	p   phase
	err error
}

// newsWait bounds how long a client whose loop failed waits for news from
// the server before it explains the failure alone. The news (the server's
// own error, or its connection closing as its process ends) lags the
// failed request only by the time the kernel takes to tell both.
const newsWait = time.Second

// failed explains err, the failure of this side's loop, given the
// channel of the server's answer. The server's news comes first: its own
// error, or its end of the connection closing, when it went away and the
// failed request only told of it sooner. Then a refused post gives way to
// the failed record that put the queue in ERROR (see explain).
func (e *endpoint) failed(err error, answers <-chan answer) error {
	var a answer
	select {
	case a = <-answers:
	case <-time.After(newsWait):
	}
	err = e.explain(err)
	switch {
	case a.p.Err != "":
		return fmt.Errorf("%w; %w", err, serverSaid(a.p.Err))
	case errors.Is(a.err, errPeerClosed):
		var cre *jetty.CRError
		if errors.As(err, &cre) {
			return &goneError{err}
		}
		return &goneError{a.err}
	}
	return err
}

// goneError is the failure of a run whose peer went away in the middle of
// it: its end of the out-of-band connection closed. err is the first of
// this side's requests that failed with it or, if none did, the closing.
type goneError struct{ err error }

func (g *goneError) Error() string { return g.err.Error() }
func (g *goneError) Unwrap() error { return g.err }

// blame names the peer (who: "perf server ADDR") in the error of a run:
// "who gone: ..." when it went away, "who: ..." when one of the requests
// to it failed. The failed request's status is the news, not the state of
// the queue it left behind.
func blame(who string, err error) error {
	var g *goneError
	var cre *jetty.CRError
	switch {
	case errors.As(err, &g), errors.Is(err, errPeerClosed):
		return fmt.Errorf("%s gone: %w", who, err)
	case errors.As(err, &cre):
		return fmt.Errorf("%s: %w", who, err)
	}
	return err
}

// Server listens at s.Addr, serves one client and returns when it is done.
func Server(ctx context.Context, s Side) error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	logf(s.Log, "perf server: device %s, listening on %s\n", s.Device, ln.Addr())
	c, err := acceptOOB(ctx, ln)
	if err != nil {
		return err
	}
	_ = ln.Close()
	ch := newOOB(ctx, c)
	defer ch.close()
	var h hello
	if err := ch.recv(&h); err != nil {
		return orCtx(ctx, err)
	}
	e, err := serverEndpoint(s, h)
	if err != nil {
		_ = ch.send(welcome{Err: err.Error()})
		return err
	}
	defer e.close()
	logf(s.Log, "perf server: client %s runs %s, mode %s, %s loops\n", c.RemoteAddr(), e.cfg.Test, modeName(e.cfg.Mode), loops(e.cfg.Tuned))
	client := "perf client " + c.RemoteAddr().String()
	mine, err := e.info()
	if err != nil {
		_ = ch.send(welcome{Err: err.Error()})
		return err
	}
	if err := ch.send(welcome{endpointInfo: mine}); err != nil {
		return orCtx(ctx, err)
	}
	for {
		var p phase
		if err := ch.recv(&p); err != nil {
			return orCtx(ctx, blame(client, err))
		}
		if p.Bye {
			logf(s.Log, "perf server: done\n")
			return nil
		}
		if err := serveSize(e, ch, p.Size); err != nil {
			return orCtx(ctx, blame(client, err))
		}
	}
}

// helloFor is the client's hello for cfg; config undoes it.
func helloFor(cfg Config, mine endpointInfo) hello {
	return hello{Version: protoVersion, Test: cfg.Test.String(), Sizes: cfg.Sizes, Iters: cfg.Iters, Duration: cfg.Duration,
		Mode: int(cfg.Mode), Event: cfg.Event, Spin: cfg.Spin, Inline: cfg.Inline, CAS: cfg.CAS, TxDepth: cfg.TxDepth, RxDepth: cfg.RxDepth,
		PostList: cfg.PostList, CQMod: cfg.CQMod, Tuned: cfg.Tuned, LockFree: cfg.LockFree, endpointInfo: mine}
}

// config checks the client's settings: everything but its endpoint.
func (h hello) config() (Config, error) {
	if h.Version != protoVersion {
		return Config{}, fmt.Errorf("client speaks perf protocol %d, this server %d: run the same urmactl on both sides", h.Version, protoVersion)
	}
	t, err := ParseTest(h.Test)
	if err != nil {
		return Config{}, err
	}
	// A mode that does not fit would otherwise be cut down to a valid one.
	if int(urma.TransportMode(h.Mode)) != h.Mode {
		return Config{}, fmt.Errorf("mode %d: want RM, RC or UM", h.Mode)
	}
	cfg := Config{Test: t, Sizes: h.Sizes, Iters: h.Iters, Duration: h.Duration, Mode: urma.TransportMode(h.Mode), Event: h.Event, Spin: h.Spin,
		Inline: h.Inline, CAS: h.CAS, TxDepth: h.TxDepth, RxDepth: h.RxDepth, PostList: h.PostList, CQMod: h.CQMod,
		Tuned: h.Tuned, LockFree: h.LockFree}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// serverEndpoint checks the client's settings and opens this side.
func serverEndpoint(s Side, h hello) (*endpoint, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	e, err := openEndpoint(s.Device, s.EID, cfg)
	if err != nil {
		return nil, err
	}
	if err := e.connect(h.endpointInfo); err != nil {
		return nil, errors.Join(err, e.close())
	}
	return e, nil
}

// serveSize answers one size: ready, the server's loop until the client
// says done, and the count.
func serveSize(e *endpoint, ch *oob, size int) error {
	if size < 1 || size > e.region {
		_ = ch.send(phase{Err: fmt.Sprintf("size %d outside the agreed 1..%d", size, e.region)})
		return fmt.Errorf("client asked for size %d", size)
	}
	clear(e.seg.Bytes())
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var progress atomic.Int64
	r, err := newRun(ctx, e, size, &progress)
	if err != nil {
		_ = ch.send(phase{Err: err.Error()})
		return err
	}
	if e.cfg.Test.Op == Send {
		if err := r.fillRecvs(); err != nil {
			_ = ch.send(phase{Err: err.Error()})
			return err
		}
	}
	if err := ch.send(phase{Size: size}); err != nil {
		return err
	}
	// The client's "done" arrives while the loop runs.
	var wg sync.WaitGroup
	var done phase
	var rerr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		rerr = ch.recv(&done)
		stop()
	}()
	var n int64
	if e.cfg.Test.BW {
		n, err = r.bwServer()
	} else {
		n, err = r.latServer()
	}
	if errors.Is(err, errStopped) {
		err = nil
	}
	if err != nil {
		stop()
		err = e.explain(err)
		_ = ch.send(phase{Err: err.Error()})
		wg.Wait()
		return err
	}
	wg.Wait()
	if rerr != nil {
		return rerr
	}
	if !done.Done {
		return fmt.Errorf("client sent %+v, want done", done)
	}
	return ch.send(phase{Done: true, Received: n})
}

// serverSaid is the error the server reported: its text is the server's,
// printed with what a terminal would act on escaped.
func serverSaid(msg string) error {
	return fmt.Errorf("perf server: %s", termsafe.String(msg))
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// orCtx prefers the context's error: a cancelled run closes the
// out-of-band connection, which is only the symptom.
func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// showProgress prints a line a second once a size has run for a second,
// until the returned function is called.
func showProgress(w io.Writer, what string, total int, done *atomic.Int64) func() {
	if w == nil {
		return func() {}
	}
	// The ticker and the line are made here, before the caller starts
	// counting allocations, not in the goroutine, which may run after.
	// The line is built in one buffer with strconv, not fmt (whose
	// arguments escape): the allocation count of a run is the whole
	// process's, and a long run prints many lines.
	quit := make(chan struct{})
	t := time.NewTicker(time.Second)
	start := time.Now()
	line := make([]byte, 0, 128)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				n := done.Load()
				rate := float64(n) / now.Sub(start).Seconds()
				line = progressLine(line[:0], what, n, total, rate)
				_, _ = w.Write(line)
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
	}
}

// progressLine appends "what: n/total iterations, rate/s" and a newline
// to b (without "/total" when total is 0).
func progressLine(b []byte, what string, n int64, total int, rate float64) []byte {
	b = strconv.AppendInt(append(append(b, what...), ": "...), n, 10)
	if total > 0 {
		b = strconv.AppendInt(append(b, '/'), int64(total), 10)
	}
	b = strconv.AppendFloat(append(b, " iterations, "...), rate, 'f', 0, 64)
	return append(b, "/s\n"...)
}
