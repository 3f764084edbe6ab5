package providertest

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

// Bad input, one table per API family: segments, queue creation, Post,
// PostRecv, imports of JFRs and Jetties, Close. A row is a bad input and
// what it must give: an error wrapping a sentinel, or a completion record
// with a status where only the execution (or the remote side) can tell.
// Every row runs against a bench, standing objects that no row breaks on
// purpose, and after every row the bench must still move data: a bad input
// fails alone.
//
// Bad inputs that other tests of the suite already check are not
// repeated; the comment above each table says which test has them.
var badInputTests = []test{
	{"segment", testBadSegment},
	{"queue create", testBadCreate},
	{"post", testBadPost},
	{"post recv", testBadPostRecv},
	{"import jetty", testBadImport},
	{"close", testBadClose},
}

// bench is what every row of a table must leave working: a JFS and its
// JFC on the initiator, a JFR and its JFC on the target imported into the
// initiator, initiator memory, target memory imported into the initiator,
// and target receive buffers.
type bench struct {
	s     sendSide
	r     recvSide
	l     *segment.Segment // initiator memory
	mem   *segment.Segment // target memory, imported as tg
	tg    *segment.Target
	rb    *segment.Segment // target receive buffers
	round byte
}

const benchLen = 256

func (e *env) newBench() *bench {
	b := &bench{s: e.sender(jetty.JFSConfig{}), r: e.receiver(jetty.JFRConfig{}),
		l: e.seg(e.a, benchLen, segment.LocalOnly), rb: e.seg(e.b, benchLen, segment.LocalOnly)}
	b.mem, b.tg = e.remoteSeg(benchLen, rwa)
	e.stillWorks(b) // a bench that does not work to begin with proves nothing
	return b
}

// stillWorks checks that the bench moves data: a WRITE, a READ of what it
// wrote, and a SEND, each with a pattern of its own.
func (e *env) stillWorks(b *bench) {
	t := e.t
	t.Helper()
	b.round++
	src := make([]byte, 32)
	fill(src, b.round*31)
	copy(b.l.Bytes()[:32], src)
	require.NoError(t, b.s.jfs.Write(b.r.remote, b.tg.SGE(0, 32), b.l.SGE(0, 32), 0, 1), "bench WRITE")
	require.Equal(t, uint64(1), e.pollOK(b.s.jfc).UserCtx, "bench WRITE")
	require.Equal(t, src, b.mem.Bytes()[:32], "bench WRITE")
	require.NoError(t, b.s.jfs.Read(b.r.remote, b.tg.SGE(0, 32), b.l.SGE(64, 32), 0, 2), "bench READ")
	require.Equal(t, uint64(2), e.pollOK(b.s.jfc).UserCtx, "bench READ")
	require.Equal(t, src, b.l.Bytes()[64:96], "bench READ")
	require.NoError(t, b.r.jfr.Recv(b.rb.SGE(0, 64), 3), "bench receive")
	require.NoError(t, b.s.jfs.Send(b.r.remote, b.l.SGE(0, 32), 0, 4), "bench SEND")
	require.Equal(t, uint64(4), e.pollOK(b.s.jfc).UserCtx, "bench SEND")
	rc := e.pollOK(b.r.jfc)
	require.Equal(t, uint64(3), rc.UserCtx, "bench receive: %v", rc)
	require.Equal(t, uint32(32), rc.Len, "bench receive: %v", rc)
	require.Equal(t, src, b.rb.Bytes()[:32], "bench receive")
}

// row runs fn as the subtest name, with a copy of e whose helpers report
// to the subtest, and then checks the bench. A non-empty skip is why the
// device cannot have the case.
func (e *env) row(t *testing.T, b *bench, name, skip string, fn func(e *env)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		if skip != "" {
			t.Skip(skip)
		}
		re := *e
		re.t = t
		defer func() {
			// Subtests run on goroutines of their own: Run's recover
			// does not see their panics.
			if r := recover(); r != nil {
				t.Fatalf("provider panicked: %v\n%s", r, debug.Stack())
			}
		}()
		fn(&re)
		re.stillWorks(b)
	})
}

// gone is what is left of a second pair of contexts once both are closed:
// the initiator-side context, with a JFC made before it closed, and the
// descriptors of a segment, a JFR and a Jetty of the target-side context,
// whose EID and address space no longer answer.
type gone struct {
	ctx        *urma.Context
	jfc        *jetty.JFC
	seg        segment.Descriptor
	jfr, jetty jetty.Descriptor
}

func (e *env) gonePair() gone {
	t := e.t
	a, b := e.pair(t)
	require.NotNil(t, a)
	require.NotNil(t, b)
	t.Cleanup(func() { _ = b.Close(); _ = a.Close() }) // if a step below fails
	g := gone{ctx: a}
	var err error
	g.jfc, err = jetty.NewJFC(a, jetty.JFCConfig{})
	require.NoError(t, err)
	s, err := segment.Alloc(b, 64, segment.Config{Access: segment.Read})
	require.NoError(t, err)
	g.seg = s.Descriptor()
	jfc, err := jetty.NewJFC(b, jetty.JFCConfig{})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(b, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	g.jfr = jfr.Descriptor()
	j, err := jetty.NewJetty(b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}})
	require.NoError(t, err)
	g.jetty = j.Descriptor()
	closeWithin(t, e.timeout, "second target context", b.Close)
	closeWithin(t, e.timeout, "second initiator context", a.Close)
	return g
}

// callRow is a call that must fail with an error wrapping want.
type callRow struct {
	name string
	skip string
	call func() error
	want error
}

func (e *env) runCalls(t *testing.T, b *bench, rows []callRow) {
	for _, r := range rows {
		e.row(t, b, r.name, r.skip, func(e *env) {
			err := r.call()
			require.ErrorIs(e.t, err, r.want)
			// Clear: the SDK's form, naming the operation, and no
			// formatting slips.
			require.True(e.t, strings.HasPrefix(err.Error(), "urma: "), "%v", err)
			require.NotContains(e.t, err.Error(), "%!", "malformed error text")
		})
	}
}

// Segments. Covered elsewhere: zero size and every bad access flag
// combination for Alloc and Register (testAccessValidation); PLAIN_TEXT
// with token 0 and a wrong token (testTokens); a descriptor with an
// unknown address space or token id, altered length or access, or of an
// unregistered segment (testImportUnknown, testUnregisteredTarget); a
// freed token id (testSharedTokenID); Alloc on a closed context
// (testContextClose); double Unregister and Unimport (testUseAfterClose).
func testBadSegment(t *testing.T, e *env) {
	b := e.newBench()
	g := e.gonePair()
	plain, err := segment.Alloc(e.b, 64, segment.Config{Access: segment.Read, TokenPolicy: segment.TokenPlainText, Token: 7})
	require.NoError(t, err)
	noPolicy := plain.Descriptor()
	noPolicy.TokenPolicy = segment.TokenNone
	e.runCalls(t, b, []callRow{
		{name: "register an empty buffer", want: urma.ErrInvalid, call: func() error {
			_, err := segment.Register(e.a, e.callerBuf(e.a, 64)[:0], segment.Config{Access: segment.Read})
			return err
		}},
		{name: "alloc of 2^64-1 bytes", want: urma.ErrInvalid, call: func() error {
			_, err := segment.Alloc(e.a, math.MaxUint64, segment.Config{Access: segment.Read})
			return err
		}},
		{name: "import a zero descriptor", want: urma.ErrInvalid, call: func() error {
			_, err := segment.Import(t.Context(), e.a, segment.Descriptor{}, 0)
			return err
		}},
		{name: "import a descriptor stripped of its token policy", want: urma.ErrInvalid, call: func() error {
			_, err := segment.Import(t.Context(), e.a, noPolicy, 0)
			return err
		}},
		{name: "import from a closed context", want: urma.ErrNotFound, call: func() error {
			_, err := segment.Import(t.Context(), e.a, g.seg, 0)
			return err
		}},
		{name: "import into a closed context", want: urma.ErrClosed, call: func() error {
			_, err := segment.Import(t.Context(), g.ctx, b.mem.Descriptor(), 0)
			return err
		}},
		{name: "register on a closed context", want: urma.ErrClosed, call: func() error {
			_, err := segment.Register(g.ctx, e.callerBuf(e.a, 64), segment.Config{Access: segment.Read})
			return err
		}},
	})
}

// Queue creation. Covered elsewhere: depth and SGEs above the device's for
// JFS, JFR and Jetty, and a mode the device lacks (testCreateLimits,
// testTooManySGEs); RC on a JFS (testRCRules); a JFR under PLAIN_TEXT with
// token 0 (testTokens); NewJFC on a closed context (testContextClose).
// After the table, the JFC the refused queues named must close: a refused
// queue holds no reference to it.
func testBadCreate(t *testing.T, e *env) {
	b := e.newBench()
	g := e.gonePair()
	jfc := e.jfc(e.a, 0)
	foreignJFC := e.jfc(e.b, 0)
	closedJFC := e.jfc(e.a, 0)
	require.NoError(t, closedJFC.Close())
	closedCE := e.jfce(e.a)
	require.NoError(t, closedCE.Close())
	foreignCE := e.jfce(e.b)
	foreignJFR, err := jetty.NewJFR(e.b, jetty.JFRConfig{JFC: foreignJFC})
	require.NoError(t, err)
	closedJFR, err := jetty.NewJFR(e.a, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	require.NoError(t, closedJFR.Close())
	rmJFR, err := jetty.NewJFR(e.a, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	const badMode = urma.TransportMode(0x40)
	jfs := func(cfg jetty.JFSConfig) func() error {
		return func() error { _, err := jetty.NewJFS(e.a, cfg); return err }
	}
	jfr := func(cfg jetty.JFRConfig) func() error {
		return func() error { _, err := jetty.NewJFR(e.a, cfg); return err }
	}
	jt := func(cfg jetty.JettyConfig) func() error {
		return func() error { _, err := jetty.NewJetty(e.a, cfg); return err }
	}
	noRC := ""
	if !e.attr.SupportsMode(urma.RC) {
		noRC = "the device has no RC; testCreateLimits checks the refusal"
	}
	e.runCalls(t, b, []callRow{
		{name: "JFC of negative depth", want: urma.ErrInvalid, call: func() error {
			_, err := jetty.NewJFC(e.a, jetty.JFCConfig{Depth: -1})
			return err
		}},
		{name: "JFC deeper than the device allows", want: urma.ErrInvalid, call: func() error {
			_, err := jetty.NewJFC(e.a, jetty.JFCConfig{Depth: e.attr.MaxJFCDepth + 1})
			return err
		}},
		{name: "JFC on a closed JFCE", want: urma.ErrClosed, call: func() error {
			_, err := jetty.NewJFC(e.a, jetty.JFCConfig{JFCE: closedCE})
			return err
		}},
		{name: "JFC on a JFCE of the other context", want: urma.ErrInvalid, call: func() error {
			_, err := jetty.NewJFC(e.a, jetty.JFCConfig{JFCE: foreignCE})
			return err
		}},
		{name: "JFS without JFC", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{})},
		{name: "JFS on a JFC of the other context", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{JFC: foreignJFC})},
		{name: "JFS on a closed JFC", want: urma.ErrClosed, call: jfs(jetty.JFSConfig{JFC: closedJFC})},
		{name: "JFS of negative depth", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{JFC: jfc, Depth: -1})},
		{name: "JFS of negative SGE count", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{JFC: jfc, MaxSGE: -1})},
		{name: "JFS with more inline data than the device allows", want: urma.ErrInvalid,
			call: jfs(jetty.JFSConfig{JFC: jfc, MaxInline: e.attr.MaxInline + 1})},
		{name: "JFS of negative RNR timeout", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{JFC: jfc, RNRTimeout: -time.Millisecond})},
		{name: "JFS retrying RNR 8 times", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{JFC: jfc, RNRRetry: 8})},
		{name: "JFS of an unknown mode", want: urma.ErrInvalid, call: jfs(jetty.JFSConfig{JFC: jfc, Mode: badMode})},
		{name: "JFR without JFC", want: urma.ErrInvalid, call: jfr(jetty.JFRConfig{})},
		{name: "JFR of negative depth", want: urma.ErrInvalid, call: jfr(jetty.JFRConfig{JFC: jfc, Depth: -1})},
		{name: "JFR on a closed JFC", want: urma.ErrClosed, call: jfr(jetty.JFRConfig{JFC: closedJFC})},
		{name: "JFR of an unknown mode", want: urma.ErrInvalid, call: jfr(jetty.JFRConfig{JFC: jfc, Mode: badMode})},
		{name: "JFR on a closed context", want: urma.ErrClosed, call: func() error {
			_, err := jetty.NewJFR(g.ctx, jetty.JFRConfig{JFC: g.jfc})
			return err
		}},
		{name: "jetty with a receive queue deeper than the device allows", want: urma.ErrInvalid,
			call: jt(jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, Recv: jetty.JFRConfig{Depth: e.attr.MaxJFRDepth + 1}})},
		{name: "jetty sharing a closed JFR", want: urma.ErrClosed,
			call: jt(jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, SharedJFR: closedJFR})},
		{name: "jetty sharing a JFR of the other context", want: urma.ErrInvalid,
			call: jt(jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, SharedJFR: foreignJFR})},
		{name: "RC jetty sharing an RM JFR", want: urma.ErrInvalid, skip: noRC,
			call: jt(jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc, Mode: urma.RC}, SharedJFR: rmJFR})},
	})
	require.NoError(t, rmJFR.Close())
	require.NoError(t, jfc.Close(), "a refused queue kept a reference to its JFC")
}

// outcome is what a bad request must give: a post error wrapping err, or,
// with err nil, a record with status cr.
type outcome struct {
	err error
	cr  urma.CRStatus
}

func refused(err error) outcome          { return outcome{err: err} }
func completes(st urma.CRStatus) outcome { return outcome{cr: st} }

// postRow is a request built against the bench. Refused requests are
// posted on the bench's own queue, which must stay usable; the others on
// a fresh queue with sges SGEs, since a failed one puts its queue in
// ERROR. check, if set, looks at the record and the memory; without it no
// byte of the bench's memory may change.
type postRow struct {
	name  string
	skip  string
	sges  int
	wr    func(e *env) jetty.WR
	want  outcome
	check func(e *env, cr jetty.CR, before snapshot)
}

// snapshot is the bench's memory before a row.
type snapshot struct{ l, mem, rb []byte }

func (b *bench) snap() snapshot {
	return snapshot{bytes.Clone(b.l.Bytes()), bytes.Clone(b.mem.Bytes()), bytes.Clone(b.rb.Bytes())}
}

func (e *env) untouched(b *bench, before snapshot) {
	e.t.Helper()
	require.Equal(e.t, before.l, b.l.Bytes(), "initiator memory touched")
	require.Equal(e.t, before.mem, b.mem.Bytes(), "target memory touched")
	require.Equal(e.t, before.rb, b.rb.Bytes(), "receive buffers touched")
}

func (e *env) runPost(b *bench, r postRow) {
	t := e.t
	before := b.snap()
	wr := r.wr(e)
	wr.Flags |= jetty.Signaled
	wr.UserCtx = 0xbad
	if r.want.err != nil {
		pe := postErr(t, b.s.jfs, []jetty.WR{wr})
		require.ErrorIs(t, pe, r.want.err)
		require.Zero(t, pe.Index)
		e.none(b.s.jfc)
		e.untouched(b, before)
		return
	}
	s := e.sender(jetty.JFSConfig{MaxSGE: max(r.sges, min(jetty.DefaultMaxSGE, e.attr.MaxJFSSGE))})
	require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, e.remoteStatus(r.want.cr), cr.Status, "%v", cr)
	require.Equal(t, wr.Opcode, cr.WROpcode, "%v", cr)
	require.Equal(t, wr.UserCtx, cr.UserCtx, "%v", cr)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	if r.want.cr == urma.CRSuccess {
		require.Equal(t, urma.StateReady, a.State)
	} else {
		require.Equal(t, urma.StateError, a.State, "a failed request puts its queue in ERROR")
	}
	if r.check != nil {
		r.check(e, cr, before)
	} else {
		e.untouched(b, before)
	}
}

// Post. Covered elsewhere: READ without a local SGE, inline READ or
// atomic, local SGE of another context, a target used as local memory and
// local memory as a target, a missing target (testMalformed,
// testMissingTarget); the requests after a refused one in a batch
// (testPartialBatch); more bytes than MaxMsgSize (testMsgTooLarge) or than
// a UM datagram holds (testUMSize); more SGEs than the queue's MaxSGE or
// the device's MaxReadSGE (testTooManySGEs, testReadScatter); inline data
// above MaxInline (testInlineTooLarge); misaligned and wrong-size atomics
// (testBadAtomic); unknown opcodes (testUnsupportedOpcode); a full queue
// (testQueueFull, testUnsignaledFill); remote ranges past the target
// segment (testRemoteWriteOOB, testRemoteReadOOB) and a local one past its
// segment for WRITE (testLocalOOB); a segment without the right
// (testRemoteNoRight); an unregistered target segment
// (testUnregisteredTarget); one-sided requests on UM and a remote of
// another mode (testUM, testModeMismatch); a queue in ERROR (testFlush); a
// closed queue, local segment or remote, and a closed context
// (testUseAfterClose, testContextClose).
func testBadPost(t *testing.T, e *env) {
	b := e.newBench()
	atomics := ""
	if !e.attr.AtomicOps.Has(urma.OpFAdd) {
		atomics = "the device has no FADD; testBadAtomic checks the refusal"
	}
	gather := ""
	if e.attr.MaxJFSSGE < 2 {
		gather = "the device gathers from one SGE; testWriteGather checks the refusal"
	}
	scatter := ""
	if e.attr.MaxReadSGE < 2 {
		scatter = "the device scatters a READ into one SGE; testReadScatter checks the refusal"
	}
	wrap := func(sg segment.SGE) segment.SGE { sg.Addr = math.MaxUint64 - 7; return sg }
	before := func(sg segment.SGE) segment.SGE { sg.Addr -= 8; return sg }
	write := func(local []segment.SGE, remote segment.SGE) func(e *env) jetty.WR {
		return func(*env) jetty.WR {
			return jetty.WR{Opcode: urma.OpWrite, To: b.r.remote, Local: local, Remote: remote}
		}
	}
	// freshRecv is a JFR of its own with one receive posted, for requests
	// that must not consume it.
	var fresh recvSide
	var freshBuf *segment.Segment
	freshRecv := func(e *env) *jetty.Remote {
		fresh = e.receiver(jetty.JFRConfig{})
		freshBuf = e.seg(e.b, 64, segment.LocalOnly)
		require.NoError(e.t, fresh.jfr.Recv(freshBuf.SGE(0, 64), 9))
		return fresh.remote
	}
	notConsumed := func(e *env, _ jetty.CR, before snapshot) {
		e.untouched(b, before)
		e.none(fresh.jfc)
		a, err := fresh.jfr.Query()
		require.NoError(e.t, err)
		require.Equal(e.t, 1, a.Outstanding, "the receive is still posted")
		require.Equal(e.t, make([]byte, 64), freshBuf.Bytes())
	}
	moveNothing := func(e *env, cr jetty.CR, before snapshot) {
		require.Zero(e.t, cr.Len, "%v", cr)
		e.untouched(b, before)
	}
	rows := []postRow{
		{name: "local SGE naming no segment", want: refused(urma.ErrInvalid),
			wr: write([]segment.SGE{{Addr: b.l.VA(), Len: 8}}, b.tg.SGE(0, 8))},
		{name: "remote SGE naming no segment", want: refused(urma.ErrInvalid),
			wr: write([]segment.SGE{b.l.SGE(0, 8)}, segment.SGE{Addr: b.tg.Descriptor().VA, Len: 8})},
		{name: "local SGE wrapping around the address space", want: refused(urma.ErrInvalid),
			wr: write([]segment.SGE{wrap(b.l.SGE(0, 16))}, b.tg.SGE(0, 16))},
		{name: "remote range wrapping around the address space", want: refused(urma.ErrInvalid),
			wr: write([]segment.SGE{b.l.SGE(0, 16)}, wrap(b.tg.SGE(0, 16)))},
		{name: "remote SGE of an unimported target segment", want: refused(urma.ErrClosed),
			wr: func(e *env) jetty.WR {
				tg := e.remoteSegTarget(64)
				require.NoError(e.t, tg.Unimport())
				return jetty.WR{Opcode: urma.OpWrite, To: b.r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: tg.SGE(0, 8)}
			}},
		{name: "remote SGE of a target imported into the other context", want: refused(urma.ErrInvalid),
			wr: func(e *env) jetty.WR {
				tg, err := segment.Import(t.Context(), e.b, b.mem.Descriptor(), 0)
				require.NoError(e.t, err)
				return jetty.WR{Opcode: urma.OpWrite, To: b.r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: tg.SGE(0, 8)}
			}},
		{name: "target imported into the other context", want: refused(urma.ErrInvalid),
			wr: func(e *env) jetty.WR {
				r, err := jetty.ImportJFR(t.Context(), e.b, b.r.jfr.Descriptor(), 0)
				require.NoError(e.t, err)
				return jetty.WR{Opcode: urma.OpWrite, To: r, Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: b.tg.SGE(0, 8)}
			}},
		{name: "zero-length WRITE", want: completes(urma.CRSuccess),
			wr:    write([]segment.SGE{b.l.SGE(0, 0)}, b.tg.SGE(8, 0)),
			check: moveNothing},
		{name: "WRITE without local SGE", want: completes(urma.CRSuccess),
			wr:    write(nil, b.tg.SGE(8, 0)),
			check: moveNothing},
		{name: "zero-length READ", want: completes(urma.CRSuccess),
			wr: func(*env) jetty.WR {
				return jetty.WR{Opcode: urma.OpRead, To: b.r.remote, Local: []segment.SGE{b.l.SGE(128, 0)}, Remote: b.tg.SGE(0, 0)}
			},
			check: moveNothing},
		{name: "zero-length SEND", want: completes(urma.CRSuccess),
			wr: func(e *env) jetty.WR {
				require.NoError(e.t, b.r.jfr.Recv(b.rb.SGE(64, 64), 0x5e))
				return jetty.WR{Opcode: urma.OpSend, To: b.r.remote, Local: []segment.SGE{b.l.SGE(0, 0)}}
			},
			check: func(e *env, cr jetty.CR, before snapshot) {
				require.Zero(e.t, cr.Len, "%v", cr)
				rc := e.poll(b.r.jfc, 1)[0]
				require.Equal(e.t, urma.CRSuccess, rc.Status, "%v", rc)
				require.Equal(e.t, uint64(0x5e), rc.UserCtx, "%v", rc)
				require.Zero(e.t, rc.Len, "%v", rc)
				e.untouched(b, before)
			}},
		{name: "local SGE starting before its segment", want: completes(urma.CRLocAccessErr),
			wr: write([]segment.SGE{before(b.l.SGE(0, 16))}, b.tg.SGE(0, 16))},
		{name: "READ into a local SGE past its segment", want: completes(urma.CRLocAccessErr),
			wr: func(*env) jetty.WR {
				return jetty.WR{Opcode: urma.OpRead, To: b.r.remote, Local: []segment.SGE{b.l.SGE(benchLen-8, 16)}, Remote: b.tg.SGE(0, 16)}
			}},
		{name: "SEND from a local SGE past its segment", want: completes(urma.CRLocAccessErr),
			wr: func(e *env) jetty.WR {
				return jetty.WR{Opcode: urma.OpSend, To: freshRecv(e), Local: []segment.SGE{b.l.SGE(benchLen-8, 16)}}
			},
			check: notConsumed},
		{name: "atomic result past its segment", want: completes(urma.CRLocAccessErr), skip: atomics,
			wr: func(*env) jetty.WR {
				return jetty.WR{Opcode: urma.OpFAdd, To: b.r.remote, Operand: 1,
					Local: []segment.SGE{b.l.SGE(benchLen-4, 8)}, Remote: b.tg.SGE(8, 8)}
			}},
		{name: "atomic on the word after the target segment", want: completes(urma.CRRemAccessAbortErr), skip: atomics,
			wr: func(*env) jetty.WR {
				return jetty.WR{Opcode: urma.OpFAdd, To: b.r.remote, Operand: 1,
					Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: b.tg.SGE(benchLen, 8)}
			}},
		{name: "WRITE gathering overlapping SGEs", want: completes(urma.CRSuccess), sges: 2, skip: gather,
			wr: write([]segment.SGE{b.l.SGE(0, 8), b.l.SGE(4, 8)}, b.tg.SGE(128, 16)),
			check: func(e *env, cr jetty.CR, before snapshot) {
				require.Equal(e.t, uint32(16), cr.Len, "%v", cr)
				want := bytes.Clone(before.mem)
				copy(want[128:], before.l[0:8])
				copy(want[136:], before.l[4:12])
				require.Equal(e.t, want, b.mem.Bytes())
				require.Equal(e.t, before.l, b.l.Bytes())
			}},
		{name: "READ scattering into overlapping SGEs", want: completes(urma.CRSuccess), sges: 2, skip: scatter,
			wr: func(*env) jetty.WR {
				return jetty.WR{Opcode: urma.OpRead, To: b.r.remote,
					Local: []segment.SGE{b.l.SGE(128, 8), b.l.SGE(132, 8)}, Remote: b.tg.SGE(0, 16)}
			},
			check: func(e *env, cr jetty.CR, before snapshot) {
				require.Equal(e.t, uint32(16), cr.Len, "%v", cr)
				got, src := b.l.Bytes(), before.mem
				require.Equal(e.t, src[0:4], got[128:132], "bytes only the first SGE covers")
				require.Equal(e.t, src[12:16], got[136:140], "bytes only the second SGE covers")
				// Where the SGEs overlap the device may place either.
				if mid := got[132:136]; !bytes.Equal(mid, src[4:8]) && !bytes.Equal(mid, src[8:12]) {
					e.t.Fatalf("overlap holds %x, neither %x nor %x", mid, src[4:8], src[8:12])
				}
				require.Equal(e.t, before.l[:128], got[:128])
				require.Equal(e.t, before.l[140:], got[140:])
				require.Equal(e.t, before.mem, b.mem.Bytes())
			}},
		{name: "SEND to a closed JFR", want: completes(urma.CRRemAccessAbortErr),
			wr: func(e *env) jetty.WR {
				r := e.receiver(jetty.JFRConfig{})
				require.NoError(e.t, r.jfr.Close())
				return jetty.WR{Opcode: urma.OpSend, To: r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}}
			}},
		{name: "SEND to a JFR closed after use", want: completes(urma.CRRemAccessAbortErr),
			wr: func(e *env) jetty.WR {
				r := e.receiver(jetty.JFRConfig{})
				s := e.sender(jetty.JFSConfig{})
				rb := e.seg(e.b, 64, segment.LocalOnly)
				require.NoError(e.t, r.jfr.Recv(rb.SGE(0, 64), 1))
				require.NoError(e.t, s.jfs.Send(r.remote, b.l.SGE(0, 8), 0, 1))
				e.pollOK(s.jfc)
				e.pollOK(r.jfc)
				require.NoError(e.t, r.jfr.Close())
				return jetty.WR{Opcode: urma.OpSend, To: r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}}
			}},
		{name: "WRITE through a closed JFR", want: completes(urma.CRRemAccessAbortErr),
			wr: func(e *env) jetty.WR {
				r := e.receiver(jetty.JFRConfig{})
				require.NoError(e.t, r.jfr.Close())
				return jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: b.tg.SGE(0, 8)}
			}},
		{name: "READ through a JFR in ERROR", want: completes(urma.CRRemAccessAbortErr),
			wr: func(e *env) jetty.WR {
				r := e.receiver(jetty.JFRConfig{})
				require.NoError(e.t, r.jfr.Modify(urma.JFRStateError))
				return jetty.WR{Opcode: urma.OpRead, To: r.remote, Local: []segment.SGE{b.l.SGE(128, 8)}, Remote: b.tg.SGE(0, 8)}
			}},
		{name: "SEND to a JFR in ERROR", want: completes(urma.CRRemAccessAbortErr),
			wr: func(e *env) jetty.WR {
				tgt := freshRecv(e)
				require.NoError(e.t, fresh.jfr.Modify(urma.JFRStateError))
				// ERROR flushed the receive: its record comes first.
				cr := e.poll(fresh.jfc, 1)[0]
				require.Equal(e.t, urma.CRWRFlushErr, cr.Status, "%v", cr)
				require.Equal(e.t, uint64(9), cr.UserCtx)
				return jetty.WR{Opcode: urma.OpSend, To: tgt, Local: []segment.SGE{b.l.SGE(0, 8)}}
			},
			check: func(e *env, _ jetty.CR, before snapshot) {
				e.untouched(b, before)
				e.none(fresh.jfc)
				require.Equal(e.t, make([]byte, 64), freshBuf.Bytes())
			}},
	}
	for _, r := range rows {
		e.row(t, b, r.name, r.skip, func(e *env) { e.runPost(b, r) })
	}
	e.row(t, b, "Flush before the failure is polled", "", func(e *env) {
		// The failed request's record waits in the JFC; Flush reports
		// the requests behind it, and that one only through Poll.
		s := e.sender(jetty.JFSConfig{})
		require.NoError(e.t, s.jfs.Post([]jetty.WR{
			{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: b.r.remote, UserCtx: 1,
				Local: []segment.SGE{b.l.SGE(benchLen-8, 16)}, Remote: b.tg.SGE(0, 16)},
			{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: b.r.remote, UserCtx: 2,
				Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: b.tg.SGE(192, 8)},
			{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: 3},
		}))
		a, err := s.jfs.Query()
		require.NoError(e.t, err)
		require.Equal(e.t, urma.StateError, a.State)
		got := map[uint64][]urma.CRStatus{}
		crs := make([]jetty.CR, 8)
		// The device may still be flushing the requests behind the
		// failure: Flush until the three are all reported.
		for end := time.Now().Add(e.timeout); len(got) < 3 && time.Now().Before(end); {
			n, err := s.jfs.Flush(crs)
			require.NoError(e.t, err)
			k, err := s.jfc.Poll(crs[n:])
			require.NoError(e.t, err)
			for _, cr := range crs[:n+k] {
				got[cr.UserCtx] = append(got[cr.UserCtx], cr.Status)
			}
		}
		e.none(s.jfc)
		n, err := s.jfs.Flush(crs)
		require.NoError(e.t, err)
		require.Zero(e.t, n, "flushed again: %v", crs[:n])
		require.Equal(e.t, map[uint64][]urma.CRStatus{1: {urma.CRLocAccessErr}, 2: {urma.CRWRFlushErr}, 3: {urma.CRWRFlushErr}}, got,
			"each request once: the failure by Poll, the rest by Flush")
	})
}

// recvRow is a receive request built against a JFR. Refused ones are
// posted on the bench's JFR, which must stay usable; accepted ones on a
// fresh JFR with sges SGEs, and a SEND of send bytes of the bench's
// memory must then succeed and complete the receive, which check looks
// at.
type recvRow struct {
	name  string
	skip  string
	sges  int
	wr    func(e *env) jetty.RecvWR
	want  error
	send  uint32
	check func(e *env, rc jetty.CR, buf *segment.Segment)
}

func (e *env) runRecv(b *bench, r recvRow, buf **segment.Segment) {
	t := e.t
	*buf = e.seg(e.b, 64, segment.LocalOnly)
	if r.want != nil {
		wr := r.wr(e)
		err := b.r.jfr.PostRecv([]jetty.RecvWR{wr})
		var pe *jetty.PostError
		require.ErrorAs(t, err, &pe)
		require.ErrorIs(t, err, r.want)
		require.Zero(t, pe.Index)
		a, err := b.r.jfr.Query()
		require.NoError(t, err)
		require.Zero(t, a.Outstanding, "a refused receive holds no slot")
		// The same receive last in a list, behind good ones: one in a
		// segment of its own and, unless the row closed it, one in the
		// row's buffer, which the bad receive may name too. Those are
		// posted; the error names the bad one.
		list := []jetty.RecvWR{{Local: []segment.SGE{e.seg(e.b, 64, segment.LocalOnly).SGE(0, 8)}}}
		if !errors.Is(r.want, urma.ErrClosed) {
			list = append(list, jetty.RecvWR{Local: []segment.SGE{(*buf).SGE(0, 8)}})
		}
		list = append(list, wr)
		rs := e.receiver(jetty.JFRConfig{})
		err = rs.jfr.PostRecv(list)
		require.ErrorAs(t, err, &pe)
		require.ErrorIs(t, err, r.want)
		require.Equal(t, len(list)-1, pe.Index, "the receives before the bad one are posted")
		a, err = rs.jfr.Query()
		require.NoError(t, err)
		require.Equal(t, len(list)-1, a.Outstanding, "only the good receives hold slots")
		return
	}
	rs := e.receiver(jetty.JFRConfig{MaxSGE: max(r.sges, min(jetty.DefaultMaxSGE, e.attr.MaxJFRSGE))})
	wr := r.wr(e)
	wr.UserCtx = 0x7ec
	require.NoError(t, rs.jfr.PostRecv([]jetty.RecvWR{wr}))
	s := e.sender(jetty.JFSConfig{})
	fill(b.l.Bytes()[128:192], 0x40)
	require.NoError(t, s.jfs.Send(rs.remote, b.l.SGE(128, r.send), 0, 1))
	require.Equal(t, r.send, e.pollOK(s.jfc).Len)
	rc := e.poll(rs.jfc, 1)[0]
	require.Equal(t, urma.CRSuccess, rc.Status, "%v", rc)
	require.Equal(t, uint64(0x7ec), rc.UserCtx, "%v", rc)
	require.Equal(t, r.send, rc.Len, "%v", rc)
	r.check(e, rc, *buf)
}

// PostRecv. Covered elsewhere: more SGEs than the JFR's MaxSGE
// (testTooManySGEs); a closed JFR or Jetty (testUseAfterClose); a message
// longer than the buffers (testRecvTooSmall). A buffer outside its
// segment is refused here, at post, rather than failing the sender of
// whichever message would have landed in it.
func testBadPostRecv(t *testing.T, e *env) {
	b := e.newBench()
	var buf *segment.Segment // the row's receive buffer, 64 bytes of the target
	scatter := ""
	if e.attr.MaxJFRSGE < 2 {
		scatter = "the device receives into one SGE; testRecvScatter checks the refusal"
	}
	one := func(sg func() segment.SGE) func(e *env) jetty.RecvWR {
		return func(*env) jetty.RecvWR { return jetty.RecvWR{Local: []segment.SGE{sg()}} }
	}
	rows := []recvRow{
		{name: "buffer naming no segment", want: urma.ErrInvalid,
			wr: one(func() segment.SGE { return segment.SGE{Addr: buf.VA(), Len: 8} })},
		{name: "buffer of the other context", want: urma.ErrInvalid,
			wr: one(func() segment.SGE { return b.l.SGE(0, 8) })},
		{name: "imported target as buffer", want: urma.ErrInvalid,
			wr: func(e *env) jetty.RecvWR {
				s := e.seg(e.a, 64, segment.Read)
				tg, err := segment.Import(t.Context(), e.b, s.Descriptor(), 0)
				require.NoError(e.t, err)
				return jetty.RecvWR{Local: []segment.SGE{tg.SGE(0, 8)}}
			}},
		{name: "closed segment", want: urma.ErrClosed,
			wr: func(e *env) jetty.RecvWR {
				require.NoError(e.t, buf.Unregister())
				return jetty.RecvWR{Local: []segment.SGE{buf.SGE(0, 8)}}
			}},
		{name: "buffer past its segment", want: urma.ErrRange,
			wr: one(func() segment.SGE { return buf.SGE(32, 64) })},
		{name: "buffer starting before its segment", want: urma.ErrRange,
			wr: one(func() segment.SGE { sg := buf.SGE(0, 16); sg.Addr -= 8; return sg })},
		{name: "buffer wrapping around the address space", want: urma.ErrRange,
			wr: one(func() segment.SGE { sg := buf.SGE(0, 16); sg.Addr = math.MaxUint64 - 7; return sg })},
		{name: "zero-length buffer", send: 0,
			wr: one(func() segment.SGE { return buf.SGE(8, 0) }),
			check: func(e *env, _ jetty.CR, buf *segment.Segment) {
				require.Equal(e.t, make([]byte, 64), buf.Bytes())
			}},
		{name: "no buffer at all", send: 0,
			wr: func(*env) jetty.RecvWR { return jetty.RecvWR{} },
			check: func(e *env, _ jetty.CR, buf *segment.Segment) {
				require.Equal(e.t, make([]byte, 64), buf.Bytes())
			}},
		{name: "overlapping buffers", send: 16, sges: 2, skip: scatter,
			wr: func(*env) jetty.RecvWR {
				return jetty.RecvWR{Local: []segment.SGE{buf.SGE(8, 8), buf.SGE(12, 8)}}
			},
			check: func(e *env, _ jetty.CR, buf *segment.Segment) {
				got, src := buf.Bytes(), b.l.Bytes()[128:144]
				require.Equal(e.t, src[0:4], got[8:12], "bytes only the first SGE covers")
				require.Equal(e.t, src[12:16], got[16:20], "bytes only the second SGE covers")
				if mid := got[12:16]; !bytes.Equal(mid, src[4:8]) && !bytes.Equal(mid, src[8:12]) {
					e.t.Fatalf("overlap holds %x, neither %x nor %x", mid, src[4:8], src[8:12])
				}
				require.Equal(e.t, make([]byte, 8), got[:8])
				require.Equal(e.t, make([]byte, 44), got[20:])
			}},
	}
	for _, r := range rows {
		e.row(t, b, r.name, r.skip, func(e *env) { e.runRecv(b, r, &buf) })
	}
	e.row(t, b, "more receives than the depth", "", func(e *env) {
		r := e.receiver(jetty.JFRConfig{Depth: 4})
		rb := e.seg(e.b, 64, segment.LocalOnly)
		wrs := make([]jetty.RecvWR, 5)
		for i := range wrs {
			wrs[i] = jetty.RecvWR{UserCtx: uint64(i), Local: []segment.SGE{rb.SGE(uint64(i)*8, 8)}}
		}
		err := r.jfr.PostRecv(wrs)
		var pe *jetty.PostError
		require.ErrorAs(e.t, err, &pe)
		require.ErrorIs(e.t, err, urma.ErrAgain)
		require.Equal(e.t, 4, pe.Index, "the receives that fit are posted")
		a, err := r.jfr.Query()
		require.NoError(e.t, err)
		require.Equal(e.t, 4, a.Outstanding)
		// The four are real: four messages land in order.
		s := e.sender(jetty.JFSConfig{})
		for i := 0; i < 4; i++ {
			require.NoError(e.t, s.jfs.Send(r.remote, b.l.SGE(0, 8), 0, uint64(i)))
			e.pollOK(s.jfc)
			require.Equal(e.t, uint64(i), e.pollOK(r.jfc).UserCtx)
		}
	})
	e.row(t, b, "JFR in ERROR", "", func(e *env) {
		r := e.receiver(jetty.JFRConfig{})
		rb := e.seg(e.b, 64, segment.LocalOnly)
		require.NoError(e.t, r.jfr.Modify(urma.JFRStateError))
		require.ErrorIs(e.t, r.jfr.Recv(rb.SGE(0, 8), 1), urma.ErrBadState)
		a, err := r.jfr.Query()
		require.NoError(e.t, err)
		require.Zero(e.t, a.Outstanding)
	})
}

// Imports of JFRs and Jetties. Covered elsewhere: a JFR with a wrong
// token and a JFR descriptor imported as a Jetty (testTokens); an unknown
// id (testImportUnknown); an import into a closed context
// (testContextClose).
func testBadImport(t *testing.T, e *env) {
	b := e.newBench()
	g := e.gonePair()
	jfc := e.jfc(e.b, 0)
	plain, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc},
		Recv: jetty.JFRConfig{TokenPolicy: segment.TokenPlainText, Token: 5}})
	require.NoError(t, err)
	closedJFR, err := jetty.NewJFR(e.b, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	require.NoError(t, closedJFR.Close())
	closedJetty, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}})
	require.NoError(t, err)
	require.NoError(t, closedJetty.Close())
	otherMode := b.r.jfr.Descriptor()
	otherMode.Mode = urma.RC
	if !e.attr.SupportsMode(urma.RC) {
		otherMode.Mode = urma.UM
	}
	noPolicy := plain.Descriptor()
	noPolicy.TokenPolicy = segment.TokenNone
	jfr := func(d jetty.Descriptor, token uint32) func() error {
		return func() error { _, err := jetty.ImportJFR(t.Context(), e.a, d, token); return err }
	}
	jt := func(d jetty.Descriptor, token uint32) func() error {
		return func() error { _, err := jetty.ImportJetty(t.Context(), e.a, d, token); return err }
	}
	e.runCalls(t, b, []callRow{
		{name: "jetty with a wrong token", want: urma.ErrPermission, call: jt(plain.Descriptor(), 6)},
		{name: "jetty descriptor imported as a JFR", want: urma.ErrInvalid, call: jfr(plain.Descriptor(), 5)},
		{name: "closed JFR", want: urma.ErrNotFound, call: jfr(closedJFR.Descriptor(), 0)},
		{name: "closed jetty", want: urma.ErrNotFound, call: jt(closedJetty.Descriptor(), 0)},
		{name: "JFR of a closed context", want: urma.ErrNotFound, call: jfr(g.jfr, 0)},
		{name: "jetty of a closed context", want: urma.ErrNotFound, call: jt(g.jetty, 0)},
		{name: "zero descriptor", want: urma.ErrInvalid, call: jfr(jetty.Descriptor{}, 0)},
		{name: "descriptor of another mode", want: urma.ErrInvalid, call: jfr(otherMode, 0)},
		{name: "descriptor stripped of its token policy", want: urma.ErrInvalid, call: jt(noPolicy, 0)},
	})
	// The refusals leave the jetty importable with its token.
	_, err = jetty.ImportJetty(t.Context(), e.a, plain.Descriptor(), 5)
	require.NoError(t, err)
}

// anyOp tells flushed not to check opcodes: those of flushed receives.
const anyOp = urma.Opcode(0xff)

// flushed checks records of a closed queue: each a WR_FLUSH_ERR with the
// queue's id and the user context and opcode of its request.
func flushed(t *testing.T, crs []jetty.CR, id uint32, ctx []uint64, op urma.Opcode, flags jetty.CRFlags) {
	t.Helper()
	require.Len(t, crs, len(ctx))
	for i, cr := range crs {
		require.Equal(t, urma.CRWRFlushErr, cr.Status, "%v", cr)
		require.Equal(t, ctx[i], cr.UserCtx, "%v", cr)
		require.Equal(t, id, cr.LocalID, "%v", cr)
		require.Equal(t, flags, cr.Flags&(jetty.CRRecv|jetty.CRJetty), "%v", cr)
		if op != anyOp {
			require.Equal(t, op, sentAs(cr), "%v", cr)
		}
	}
}

// inOrder checks the records of requests numbered from 0 by user
// context, of a queue closed while they ran: each once, in order, a
// success until the first WR_FLUSH_ERR and then only flushes.
func inOrder(t *testing.T, crs []jetty.CR, flags jetty.CRFlags) {
	t.Helper()
	flushing := false
	for i, cr := range crs {
		require.Equal(t, uint64(i), cr.UserCtx, "each request once, in order: %v", cr)
		require.Equal(t, flags, cr.Flags&jetty.CRRecv, "%v", cr)
		switch cr.Status {
		case urma.CRSuccess:
			require.False(t, flushing, "a request completed after one before it was flushed: %v", cr)
		case urma.CRWRFlushErr:
			flushing = true
		default:
			t.Fatalf("a request cut off by Close: %v", cr)
		}
	}
}

// Close. Covered elsewhere: Close twice of a JFS, JFR, JFC, Jetty,
// segment, target, token id and context, and calls after Close
// (testUseAfterClose, testContextClose, testSharedTokenID); a JFC still
// used by a queue (testJFCInUse); a JFR shared by jetties
// (testSharedJFR); objects with unacknowledged events (testFailureEvent,
// testCloseUnacked). A Close while requests or receives are outstanding
// returns, and each of them then completes exactly once: with success if
// it finished first, else with WR_FLUSH_ERR.
func testBadClose(t *testing.T, e *env) {
	b := e.newBench()
	noRNR := ""
	if !e.attr.RNR {
		noRNR = "the device has no RNR: a SEND without a receive fails at once, so none waits (\"JFS with WRITEs in flight\" has requests in flight)"
	}
	e.row(t, b, "JFCE twice", "", func(e *env) {
		ce := e.jfce(e.a)
		require.NoError(e.t, ce.Close())
		require.NoError(e.t, ce.Close())
	})
	e.row(t, b, "imported JFR twice", "", func(e *env) {
		r, err := jetty.ImportJFR(t.Context(), e.a, b.r.jfr.Descriptor(), 0)
		require.NoError(e.t, err)
		require.NoError(e.t, r.Unimport())
		require.NoError(e.t, r.Unimport())
	})
	e.row(t, b, "JFCE used by a JFC", "", func(e *env) {
		ce := e.jfce(e.a)
		jfc := e.eventJFC(e.a, ce)
		require.ErrorIs(e.t, ce.Close(), urma.ErrBusy)
		require.NoError(e.t, jfc.Close())
		require.NoError(e.t, ce.Close())
	})
	e.row(t, b, "JFS with a SEND waiting for a receive", noRNR, func(e *env) {
		s := e.sender(jetty.JFSConfig{RNRRetry: 7, RNRTimeout: 5 * time.Millisecond})
		r := e.receiver(jetty.JFRConfig{})
		a, err := s.jfs.Query()
		require.NoError(e.t, err)
		// The WRITE and the NOP wait behind the SEND.
		require.NoError(e.t, s.jfs.Post([]jetty.WR{
			{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}, UserCtx: 1},
			{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{b.l.SGE(0, 8)}, Remote: b.tg.SGE(192, 8), UserCtx: 2},
			{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: 3},
		}))
		time.Sleep(20 * time.Millisecond)
		e.none(s.jfc)
		closeWithin(e.t, e.timeout, "JFS", s.jfs.Close)
		crs := e.poll(s.jfc, 3)
		flushed(e.t, crs[:1], a.ID.ID, []uint64{1}, urma.OpSend, 0)
		flushed(e.t, crs[1:2], a.ID.ID, []uint64{2}, urma.OpWrite, 0)
		flushed(e.t, crs[2:], a.ID.ID, []uint64{3}, urma.OpNOP, 0)
		e.none(s.jfc)
		// Nothing of the closed queue runs later.
		rb := e.seg(e.b, 64, segment.LocalOnly)
		require.NoError(e.t, r.jfr.Recv(rb.SGE(0, 64), 4))
		e.none(r.jfc)
		require.Equal(e.t, make([]byte, 64), rb.Bytes())
		require.NoError(e.t, s.jfc.Close())
	})
	e.row(t, b, "JFS with WRITEs in flight", "", func(e *env) {
		const n, size = 16, 256 << 10
		s := e.sender(jetty.JFSConfig{Depth: n})
		a, err := s.jfs.Query()
		require.NoError(e.t, err)
		l := e.seg(e.a, size, segment.LocalOnly)
		_, tg := e.remoteSeg(size, rwa)
		wrs := make([]jetty.WR, n)
		for i := range wrs {
			wrs[i] = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: b.r.remote,
				Local: []segment.SGE{l.SGE(0, size)}, Remote: tg.SGE(0, size), UserCtx: uint64(i)}
		}
		require.NoError(e.t, s.jfs.Post(wrs))
		closeWithin(e.t, e.timeout, "JFS", s.jfs.Close)
		crs := e.poll(s.jfc, n)
		inOrder(e.t, crs, 0)
		done := 0
		for _, cr := range crs {
			require.Equal(e.t, a.ID.ID, cr.LocalID, "%v", cr)
			require.Equal(e.t, urma.OpWrite, cr.WROpcode, "%v", cr)
			if cr.Status == urma.CRSuccess {
				done++
			}
		}
		e.t.Logf("%d completed before the close, %d flushed", done, n-done)
		e.none(s.jfc)
		require.NoError(e.t, s.jfc.Close())
	})
	e.row(t, b, "JFS closed while requests are posted", "", func(e *env) {
		s := e.sender(jetty.JFSConfig{Depth: 16})
		posted, postErr := postUntilRefused(func(n uint64) error {
			return s.jfs.Post([]jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: b.r.remote,
				Local: []segment.SGE{b.l.SGE(128, 8)}, Remote: b.tg.SGE(128, 8), UserCtx: n}})
		})
		// Polling frees slots, so that posts run up to the Close.
		var got []jetty.CR
		buf := make([]jetty.CR, 16)
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
			k, err := s.jfc.Poll(buf)
			require.NoError(e.t, err)
			got = append(got, buf[:k]...)
		}
		closeWithin(e.t, e.timeout, "JFS", s.jfs.Close)
		n := <-posted
		require.ErrorIs(e.t, <-postErr, urma.ErrClosed)
		got = append(got, e.poll(s.jfc, int(n)-len(got))...)
		inOrder(e.t, got, 0)
		e.none(s.jfc)
		e.t.Logf("%d requests posted", n)
	})
	e.row(t, b, "JFR closed while receives are posted", "", func(e *env) {
		r := e.receiver(jetty.JFRConfig{Depth: 16})
		s := e.sender(jetty.JFSConfig{RNRRetry: 7})
		rb := e.seg(e.b, 64, segment.LocalOnly)
		posted, postErr := postUntilRefused(func(n uint64) error { return r.jfr.Recv(rb.SGE(0, 64), n) })
		// Messages consume receives, so that posts run up to the Close.
		// Without RNR a message that found none would fail: then the
		// posts just race the Close.
		var got []jetty.CR
		for i, end := uint64(0), time.Now().Add(20*time.Millisecond); time.Now().Before(end); i++ {
			if !e.attr.RNR {
				time.Sleep(time.Millisecond)
				continue
			}
			require.NoError(e.t, s.jfs.Send(r.remote, b.l.SGE(0, 8), 0, i))
			e.pollOK(s.jfc)
			got = append(got, e.poll(r.jfc, 1)...)
		}
		consumed := len(got)
		closeWithin(e.t, e.timeout, "JFR", r.jfr.Close)
		n := <-posted
		require.ErrorIs(e.t, <-postErr, urma.ErrClosed)
		got = append(got, e.poll(r.jfc, int(n)-len(got))...)
		inOrder(e.t, got, jetty.CRRecv)
		e.none(r.jfc)
		e.t.Logf("%d receives posted, %d consumed, %d flushed", n, consumed, int(n)-consumed)
	})
	e.row(t, b, "JFR with posted receives", "", func(e *env) {
		r := e.receiver(jetty.JFRConfig{})
		id := r.jfr.Descriptor().ID.ID
		rb := e.seg(e.b, 64, segment.LocalOnly)
		for i := uint64(1); i <= 3; i++ {
			require.NoError(e.t, r.jfr.Recv(rb.SGE(i*8, 8), i))
		}
		closeWithin(e.t, e.timeout, "JFR", r.jfr.Close)
		flushed(e.t, e.poll(r.jfc, 3), id, []uint64{1, 2, 3}, anyOp, jetty.CRRecv)
		e.none(r.jfc)
		require.NoError(e.t, r.jfc.Close())
	})
	e.row(t, b, "JFR with a receive into a view", "", func(e *env) {
		// A view runs one transfer at a time and is released by the
		// record of the request through it: a receive lost with its JFR
		// would keep it busy for good.
		mem := e.seg(e.a, 64, segment.LocalOnly)
		v, err := view.New(e.a, view.Config{Layout: view.Layout{
			Entries: []view.LayoutEntry{{Mem: mem, Bytes: 64}}}})
		require.NoError(e.t, err)
		e.t.Cleanup(func() { _ = v.Close() })
		jfc := e.jfc(e.a, 0)
		jfr, err := jetty.NewJFR(e.a, jetty.JFRConfig{JFC: jfc})
		require.NoError(e.t, err)
		id := jfr.Descriptor().ID.ID
		require.NoError(e.t, jfr.Recv(v.SGE(0, 64), 5))
		closeWithin(e.t, e.timeout, "JFR", jfr.Close)
		flushed(e.t, e.poll(jfc, 1), id, []uint64{5}, anyOp, jetty.CRRecv)
		again, err := jetty.NewJFR(e.a, jetty.JFRConfig{JFC: jfc})
		require.NoError(e.t, err)
		require.NoError(e.t, again.Recv(v.SGE(0, 64), 6), "the view is free again")
	})
	e.row(t, b, "jetty with receives posted and a SEND waiting", "", func(e *env) {
		jfc := e.jfc(e.a, 0)
		j, err := jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc, RNRRetry: 7, RNRTimeout: 5 * time.Millisecond}})
		require.NoError(e.t, err)
		id := j.Descriptor().ID.ID
		rb := e.seg(e.a, 64, segment.LocalOnly)
		require.NoError(e.t, j.Recv(rb.SGE(0, 32), 1))
		require.NoError(e.t, j.Recv(rb.SGE(32, 32), 2))
		sends := []uint64{}
		if e.attr.RNR {
			r := e.receiver(jetty.JFRConfig{})
			require.NoError(e.t, j.Send(r.remote, b.l.SGE(0, 8), 0, 3))
			sends = append(sends, 3)
			time.Sleep(20 * time.Millisecond)
		}
		e.none(jfc)
		closeWithin(e.t, e.timeout, "jetty", j.Close)
		var recvs, send []jetty.CR
		for _, cr := range e.poll(jfc, 2+len(sends)) {
			if cr.Flags&jetty.CRRecv != 0 {
				recvs = append(recvs, cr)
			} else {
				send = append(send, cr)
			}
		}
		flushed(e.t, recvs, id, []uint64{1, 2}, anyOp, jetty.CRRecv|jetty.CRJetty)
		flushed(e.t, send, id, sends, urma.OpSend, jetty.CRJetty)
		e.none(jfc)
		require.Equal(e.t, make([]byte, 64), rb.Bytes())
		require.NoError(e.t, jfc.Close())
	})
	e.row(t, b, "local segment of a waiting SEND unregistered", noRNR, func(e *env) {
		s := e.sender(jetty.JFSConfig{RNRRetry: 7, RNRTimeout: 5 * time.Millisecond})
		r := e.receiver(jetty.JFRConfig{})
		l := e.seg(e.a, 64, segment.LocalOnly)
		fill(l.Bytes(), 9)
		require.NoError(e.t, s.jfs.Send(r.remote, l.SGE(0, 16), 0, 1))
		time.Sleep(20 * time.Millisecond)
		e.none(s.jfc)
		closeWithin(e.t, e.timeout, "segment", l.Unregister)
		rb := e.seg(e.b, 64, segment.LocalOnly)
		require.NoError(e.t, r.jfr.Recv(rb.SGE(0, 64), 2))
		cr := e.poll(s.jfc, 1)[0]
		require.Equal(e.t, urma.CRLocAccessErr, cr.Status, "%v", cr)
		require.Equal(e.t, uint64(1), cr.UserCtx, "%v", cr)
		e.none(r.jfc)
		require.Equal(e.t, make([]byte, 64), rb.Bytes())
	})
	e.row(t, b, "target context closed under a waiting SEND", noRNR, func(e *env) {
		a2, b2, jfc, s, _, jfr := e.ownPair()
		rm, err := jetty.ImportJFR(t.Context(), a2, jfr.Descriptor(), 0)
		require.NoError(e.t, err)
		l, err := segment.Alloc(a2, 64, segment.Config{Access: segment.LocalOnly})
		require.NoError(e.t, err)
		require.NoError(e.t, s.Post([]jetty.WR{
			{Opcode: urma.OpSend, Flags: jetty.Signaled, To: rm, Local: []segment.SGE{l.SGE(0, 8)}, UserCtx: 1},
			{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: 2},
		}))
		time.Sleep(20 * time.Millisecond)
		e.none(jfc)
		closeWithin(e.t, e.timeout, "target context", b2.Close)
		cr := e.poll(jfc, 1)[0]
		require.Equal(e.t, urma.CRRemAccessAbortErr, cr.Status, "%v", cr)
		require.Equal(e.t, uint64(1), cr.UserCtx, "%v", cr)
		crs := make([]jetty.CR, 4)
		n, err := s.Flush(crs)
		require.NoError(e.t, err)
		require.Equal(e.t, 1, n, "%v", crs[:n])
		require.Equal(e.t, urma.CRWRFlushErr, crs[0].Status, "%v", crs[0])
		require.Equal(e.t, uint64(2), crs[0].UserCtx, "%v", crs[0])
		closeWithin(e.t, e.timeout, "initiator context", a2.Close)
	})
	e.row(t, b, "initiator context closed with requests in flight", "", func(e *env) {
		const n, size = 8, 256 << 10
		a2, b2, jfc, s, rjfc, jfr := e.ownPair()
		rb, err := segment.Alloc(b2, 64, segment.Config{Access: segment.LocalOnly})
		require.NoError(e.t, err)
		require.NoError(e.t, jfr.Recv(rb.SGE(0, 64), 1))
		mem, err := segment.Alloc(b2, size, segment.Config{Access: rwa})
		require.NoError(e.t, err)
		tg, err := segment.Import(t.Context(), a2, mem.Descriptor(), 0)
		require.NoError(e.t, err)
		idle, err := jetty.NewJFR(b2, jetty.JFRConfig{JFC: rjfc})
		require.NoError(e.t, err)
		rm, err := jetty.ImportJFR(t.Context(), a2, idle.Descriptor(), 0)
		require.NoError(e.t, err)
		l, err := segment.Alloc(a2, size, segment.Config{Access: segment.LocalOnly})
		require.NoError(e.t, err)
		wrs := make([]jetty.WR, n)
		for i := range wrs {
			wrs[i] = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: rm,
				Local: []segment.SGE{l.SGE(0, size)}, Remote: tg.SGE(0, size), UserCtx: uint64(i)}
		}
		if e.attr.RNR {
			// idle has no receive: the SEND waits, and the WRITEs after it.
			wrs = append([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled, To: rm,
				Local: []segment.SGE{l.SGE(0, 8)}, UserCtx: 99}}, wrs...)
		}
		require.NoError(e.t, s.Post(wrs))
		closeWithin(e.t, e.timeout, "initiator context", a2.Close)
		_, err = jfc.Poll(make([]jetty.CR, 1))
		require.ErrorIs(e.t, err, urma.ErrClosed)
		// The target context still receives, from the bench's initiator.
		r, err := jetty.ImportJFR(t.Context(), e.a, jfr.Descriptor(), 0)
		require.NoError(e.t, err)
		copy(b.l.Bytes()[:8], "survivor")
		require.NoError(e.t, b.s.jfs.Send(r, b.l.SGE(0, 8), 0, 7))
		require.Equal(e.t, uint64(7), e.pollOK(b.s.jfc).UserCtx)
		require.Equal(e.t, uint64(1), e.pollOK(rjfc).UserCtx)
		require.Equal(e.t, "survivor", string(rb.Bytes()[:8]))
	})
}

// postUntilRefused posts with post (its argument numbers the posts) in a
// goroutine, retrying while the queue is full, until a post is refused;
// then it sends how many went in, and the refusal.
func postUntilRefused(post func(n uint64) error) (<-chan uint64, <-chan error) {
	posted, refused := make(chan uint64, 1), make(chan error, 1)
	go func() {
		var n uint64
		for {
			err := post(n)
			switch {
			case err == nil:
				n++
			case errors.Is(err, urma.ErrAgain):
				runtime.Gosched()
			default:
				posted <- n
				refused <- err
				return
			}
		}
	}()
	return posted, refused
}

// ownPair opens two contexts of their own, for a row that closes one of
// them, with a JFS (waiting on RNR for ever) on the first and a JFR on the
// second, each with its JFC. Both contexts are closed at the end of the
// test if the row did not.
func (e *env) ownPair() (a, b *urma.Context, jfc *jetty.JFC, s *jetty.JFS, rjfc *jetty.JFC, jfr *jetty.JFR) {
	a, b = e.pair(e.t)
	e.t.Cleanup(func() {
		closeWithin(e.t, e.timeout, "second initiator context", a.Close)
		closeWithin(e.t, e.timeout, "second target context", b.Close)
	})
	jfc, err := jetty.NewJFC(a, jetty.JFCConfig{})
	require.NoError(e.t, err)
	s, err = jetty.NewJFS(a, jetty.JFSConfig{JFC: jfc, RNRRetry: 7, RNRTimeout: 5 * time.Millisecond})
	require.NoError(e.t, err)
	rjfc, err = jetty.NewJFC(b, jetty.JFCConfig{})
	require.NoError(e.t, err)
	jfr, err = jetty.NewJFR(b, jetty.JFRConfig{JFC: rjfc})
	require.NoError(e.t, err)
	return a, b, jfc, s, rjfc, jfr
}
