package providertest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Prepared requests (JFS.Prepare) must do exactly what Post does with the
// same request, each time they are posted, whatever changed in between.
var preparedTests = []test{
	{"WRITE reads its source each post", testPreparedWrite},
	{"READ", testPreparedRead},
	{"atomics with new operands", testPreparedAtomics},
	{"SEND_IMM with new immediates", testPreparedSendImm},
	{"SEND into receives of each shape", testPreparedSendShapes},
	{"keeps its SGE list, reads inline bytes each post", testPreparedCopies},
	{"refused as Post refuses", testPreparedRefused},
	{"more SGEs than the device takes", testPreparedTooManySGEs},
	{"local segment closed", testPreparedLocalClosed},
	{"target segment closed", testPreparedTargetClosed},
	{"target queue closed", testPreparedTargetQueueClosed},
	{"queue full", testPreparedQueueFull},
	{"queue closed", testPreparedQueueClosed},
	{"waits for a receive", testPreparedRNR},
}

func (e *env) prepare(s sendSide, wr jetty.WR) *jetty.Prepared {
	e.t.Helper()
	p, err := s.jfs.Prepare(wr)
	require.NoError(e.t, err)
	return p
}

// writeRig is a sender, a receiver, a local and a remote segment of 64
// bytes, and a prepared signaled WRITE of 8 bytes between them.
type writeRig struct {
	s        sendSide
	r        recvSide
	src, dst *segment.Segment
	p        *jetty.Prepared
}

func (e *env) writeRig(cfg jetty.JFSConfig) writeRig {
	w := writeRig{s: e.sender(cfg), r: e.receiver(jetty.JFRConfig{}), src: e.seg(e.a, 64, segment.LocalOnly)}
	var tg *segment.Target
	w.dst, tg = e.remoteSeg(64, rwa)
	w.p = e.prepare(w.s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: w.r.remote,
		Local: []segment.SGE{w.src.SGE(0, 8)}, Remote: tg.SGE(0, 8)})
	return w
}

func testPreparedWrite(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 4096, segment.LocalOnly)
	dst, tg := e.remoteSeg(4096, rwa)
	p := e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{src.SGE(16, 200)}, Remote: tg.SGE(300, 200)})
	a, err := s.jfs.Query()
	require.NoError(t, err)
	for i := range 3 {
		fill(src.Bytes(), byte(10*i+1))
		p.SetUserCtx(uint64(100 + i))
		require.NoError(t, p.Post())
		checkSendCR(t, e.pollOK(s.jfc), urma.OpWrite, uint64(100+i), 200, a, r.jfr.Descriptor().ID)
		require.Equal(t, src.Bytes()[16:216], dst.Bytes()[300:500], "post %d wrote the source as it is now", i)
		require.Equal(t, make([]byte, 300), dst.Bytes()[:300], "nothing before the range")
		require.Equal(t, make([]byte, 4096-500), dst.Bytes()[500:], "nothing after it")
	}
	e.none(r.jfc)
}

func testPreparedRead(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	dst := e.seg(e.a, 4096, segment.LocalOnly)
	src, tg := e.remoteSeg(4096, rwa)
	// 8 bytes, a counter or a flag, may take a way of its own.
	for _, n := range []uint32{100, 8} {
		p := e.prepare(s, jetty.WR{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote, UserCtx: 9,
			Local: []segment.SGE{dst.SGE(64, n)}, Remote: tg.SGE(1000, n)})
		for i := range 3 {
			b := src.Bytes()
			fill(b, byte(3*i+int(n)))
			clear(dst.Bytes())
			require.NoError(t, p.Post())
			require.Equal(t, uint64(9), e.pollOK(s.jfc).UserCtx)
			require.Equal(t, b[1000:1000+n], dst.Bytes()[64:64+n], "%d bytes, post %d", n, i)
			require.Zero(t, dst.Bytes()[64+n], "%d bytes, post %d: a byte past the range", n, i)
		}
	}
}

func testPreparedAtomics(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	res := e.seg(e.a, 64, segment.LocalOnly)
	word, tg := e.remoteSeg(64, rwa)
	if !e.attr.AtomicOps.Has(urma.OpFAdd) || !e.attr.AtomicOps.Has(urma.OpCAS) {
		t.Skip("the device lacks FADD or CAS: testBadAtomic checks that Post refuses them")
	}
	fadd := e.prepare(s, jetty.WR{Opcode: urma.OpFAdd, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{res.SGE(0, 8)}, Remote: tg.SGE(8, 8)})
	cas := e.prepare(s, jetty.WR{Opcode: urma.OpCAS, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{res.SGE(8, 8)}, Remote: tg.SGE(8, 8)})
	want := uint64(0)
	for i := uint64(1); i <= 3; i++ {
		fadd.SetAtomic(0, i)
		require.NoError(t, fadd.Post())
		e.pollOK(s.jfc)
		require.Equal(t, want, binary.NativeEndian.Uint64(res.Bytes()[0:8]), "FADD %d returns the old value", i)
		want += i
		require.Equal(t, want, binary.NativeEndian.Uint64(word.Bytes()[8:16]))
	}
	cas.SetAtomic(want+1, 77) // does not match: no swap
	require.NoError(t, cas.Post())
	e.pollOK(s.jfc)
	require.Equal(t, want, binary.NativeEndian.Uint64(res.Bytes()[8:16]))
	require.Equal(t, want, binary.NativeEndian.Uint64(word.Bytes()[8:16]))
	cas.SetAtomic(want, 77)
	require.NoError(t, cas.Post())
	e.pollOK(s.jfc)
	require.Equal(t, uint64(77), binary.NativeEndian.Uint64(word.Bytes()[8:16]))
}

func testPreparedSendImm(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	rb := e.seg(e.b, 256, segment.LocalOnly)
	copy(src.Bytes(), "prepared")
	// A device without immediate data (siw) runs the case as plain SENDs;
	// testSend checks that it refuses SEND_IMM.
	op := urma.OpSendImm
	if !e.attr.ImmData {
		op = urma.OpSend
	}
	p := e.prepare(s, jetty.WR{Opcode: op, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{src.SGE(0, 8)}})
	a, err := s.jfs.Query()
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, r.jfr.Recv(rb.SGE(uint64(64*i), 64), uint64(50+i)))
		p.SetImm(uint64(0xabc0 + i))
		p.SetUserCtx(uint64(i))
		require.NoError(t, p.Post())
		checkSendCR(t, e.pollOK(s.jfc), op, uint64(i), 8, a, r.jfr.Descriptor().ID)
		var imm *uint64
		if op == urma.OpSendImm {
			imm = u64(uint64(0xabc0 + i))
		}
		checkRecvCR(t, e.pollOK(r.jfc), op, uint64(50+i), 8, r.jfr.Descriptor().ID.ID, a.ID, imm, false)
		require.Equal(t, "prepared", string(rb.Bytes()[64*i:64*i+8]))
	}
}

// testPreparedSendShapes posts one prepared SEND into receives that a
// provider may take a short way into (one buffer, large enough) and into
// the others: two buffers, a buffer too small.
func testPreparedSendShapes(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{MaxSGE: min(2, e.attr.MaxJFRSGE)})
	src := e.seg(e.a, 64, segment.LocalOnly)
	rb := e.seg(e.b, 256, segment.LocalOnly)
	copy(src.Bytes(), "sixteen bytes!!!")
	p := e.prepare(s, jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{src.SGE(0, 16)}})
	a, err := s.jfs.Query()
	require.NoError(t, err)
	id := r.jfr.Descriptor().ID.ID

	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 1))
	require.NoError(t, p.Post())
	checkSendCR(t, e.pollOK(s.jfc), urma.OpSend, 0, 16, a, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.pollOK(r.jfc), urma.OpSend, 1, 16, id, a.ID, nil, false)
	require.Equal(t, "sixteen bytes!!!", string(rb.Bytes()[:16]))

	if e.attr.MaxJFRSGE >= 2 {
		require.NoError(t, r.jfr.PostRecv([]jetty.RecvWR{{UserCtx: 2,
			Local: []segment.SGE{rb.SGE(100, 4), rb.SGE(200, 12)}}}))
		require.NoError(t, p.Post())
		e.pollOK(s.jfc)
		checkRecvCR(t, e.pollOK(r.jfc), urma.OpSend, 2, 16, id, a.ID, nil, false)
		require.Equal(t, "sixt", string(rb.Bytes()[100:104]))
		require.Equal(t, "een bytes!!!", string(rb.Bytes()[200:212]))
	}

	// Too small for the message: the prepared SEND and a Post of it on a
	// twin queue fail alike, and each consumes a receive with an error.
	for i := range 2 {
		require.NoError(t, r.jfr.Recv(rb.SGE(64, 8), uint64(10+i)))
	}
	e.samePost(s, p)
	for _, cr := range e.poll(r.jfc, 2) {
		require.NotEqual(t, urma.CRSuccess, cr.Status, "%v", cr)
	}
}

func testPreparedCopies(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 256, segment.LocalOnly)
	dst, tg := e.remoteSeg(256, rwa)
	fill(src.Bytes(), 1)
	sges := []segment.SGE{src.SGE(0, 16)}
	p := e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: sges, Remote: tg.SGE(0, 16)})
	sges[0] = src.SGE(100, 16) // the caller's slice changes; the prepared request does not
	require.NoError(t, p.Post())
	e.pollOK(s.jfc)
	require.Equal(t, src.Bytes()[:16], dst.Bytes()[:16])
	if e.attr.MaxInline < 8 {
		return
	}
	s = e.sender(jetty.JFSConfig{MaxInline: 8})
	in := []byte("inline!!")
	pi := e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled | jetty.Inline, To: r.remote,
		Inline: in, Remote: tg.SGE(64, 8)})
	require.NoError(t, pi.Post())
	e.pollOK(s.jfc)
	require.Equal(t, "inline!!", string(dst.Bytes()[64:72]))
	copy(in, "changed!") // inline bytes are read at each post, as memory is
	require.NoError(t, pi.Post())
	e.pollOK(s.jfc)
	require.Equal(t, "changed!", string(dst.Bytes()[64:72]))
}

// samePost checks that a prepared request of s and a Post of the same
// request on a twin sender come out alike (see sameOutcome).
func (e *env) samePost(s sendSide, p *jetty.Prepared) {
	e.t.Helper()
	e.sameOutcome(s, "prepared", p.Post, p.WR())
}

// sameOutcome checks that post, which posts wr on s in some way, and a
// Post of wr on a twin sender come out alike: both refused with the same
// status (a *PostError), or both queued and completing with the same
// status (a failed request takes its queue to ERROR, hence the twin).
func (e *env) sameOutcome(s sendSide, how string, post func() error, wr jetty.WR) {
	e.t.Helper()
	twin := e.sender(jetty.JFSConfig{})
	errP := post()
	errW := twin.jfs.Post([]jetty.WR{wr})
	require.Equal(e.t, urma.StatusOf(errW), urma.StatusOf(errP), "%s: %v; Post: %v", how, errP, errW)
	if errW != nil {
		var pe *jetty.PostError
		require.ErrorAs(e.t, errP, &pe)
		return
	}
	crP, crW := e.poll(s.jfc, 1)[0], e.poll(twin.jfc, 1)[0]
	require.Equal(e.t, crW.Status, crP.Status, "%s: %v; Post: %v", how, crP, crW)
}

func testPreparedRefused(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(64, rwa)
	for _, wr := range []jetty.WR{
		{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{{Addr: src.VA(), Len: 8}}, Remote: tg.SGE(0, 8)}, // no segment
		{Opcode: urma.OpRead, To: r.remote, Local: []segment.SGE{src.SGE(0, 8)}},                                   // no remote range
		{Opcode: urma.Opcode(200), To: r.remote, Local: []segment.SGE{src.SGE(0, 8)}},                              // no such opcode
		{Opcode: urma.OpSend, To: r.remote, Local: make([]segment.SGE, e.attr.MaxJFSSGE+1)},                        // too many SGEs
		{Opcode: urma.OpFAdd, To: r.remote, Local: []segment.SGE{src.SGE(0, 4)}, Remote: tg.SGE(0, 8)},             // short result
	} {
		p, errP := s.jfs.Prepare(wr)
		if errP == nil {
			// A provider that cannot check a request without posting
			// it leaves the refusal to the prepared request's Post.
			errP = p.Post()
		}
		errW := s.jfs.Post([]jetty.WR{wr})
		require.Error(t, errW, "%+v", wr)
		require.Error(t, errP, "%+v", wr)
		require.Equal(t, urma.StatusOf(errW), urma.StatusOf(errP), "prepared: %v; Post: %v", errP, errW)
	}
	e.none(s.jfc)
}

// testPreparedTooManySGEs prepares requests of one valid SGE more than
// the queue and the device take, on a JFS and on a Jetty whose MaxSGE is
// the device's: Prepare (or the prepared request's Post) refuses them as
// Post does, and nothing moves. A list copied into a fixed array of the
// device's maximum before it is checked would lose its last SGE instead.
func testPreparedTooManySGEs(t *testing.T, e *env) {
	max := e.attr.MaxJFSSGE
	jfc := e.jfc(e.a, 0)
	jfs, err := jetty.NewJFS(e.a, jetty.JFSConfig{MaxSGE: max, JFC: jfc})
	require.NoError(t, err)
	jt, err := jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{MaxSGE: max, JFC: jfc}})
	require.NoError(t, err)
	r := e.receiver(jetty.JFRConfig{})
	rb := e.seg(e.b, 4096, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 4096), 1))
	src := e.seg(e.a, 4096, segment.LocalOnly)
	fill(src.Bytes(), 1)
	dst, tg := e.remoteSeg(4096, rwa)
	list := make([]segment.SGE, max+1)
	for i := range list {
		list[i] = src.SGE(uint64(8*i), 8)
	}
	n := uint32(8 * len(list))
	for _, q := range []interface {
		Prepare(jetty.WR) (*jetty.Prepared, error)
		Post([]jetty.WR) error
	}{jfs, jt} {
		for _, wr := range []jetty.WR{
			{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: list, Remote: tg.SGE(0, n)},
			{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote, Local: list, Remote: tg.SGE(0, n)},
			{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, Local: list},
		} {
			p, errP := q.Prepare(wr)
			if errP == nil {
				errP = p.Post()
			}
			require.ErrorIs(t, errP, urma.ErrInvalid, "prepared %v of %d SGEs on a queue of %d", wr.Opcode, len(list), max)
			require.ErrorIs(t, q.Post([]jetty.WR{wr}), urma.ErrInvalid, "%v of %d SGEs on a queue of %d", wr.Opcode, len(list), max)
		}
	}
	e.none(jfc)
	e.none(r.jfc)
	require.Equal(t, make([]byte, 4096), dst.Bytes(), "nothing written")
	require.Equal(t, make([]byte, 4096), rb.Bytes(), "nothing received")
}

func testPreparedLocalClosed(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{})
	require.NoError(t, w.src.Close())
	e.samePost(w.s, w.p)
	require.Equal(t, make([]byte, 64), w.dst.Bytes(), "nothing written from a closed segment")
}

func testPreparedTargetClosed(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{})
	require.NoError(t, w.p.Post())
	e.pollOK(w.s.jfc)
	require.NoError(t, w.dst.Close())
	e.samePost(w.s, w.p)
}

func testPreparedTargetQueueClosed(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{})
	require.NoError(t, w.r.jfr.Close())
	e.samePost(w.s, w.p)
	require.Equal(t, make([]byte, 64), w.dst.Bytes(), "nothing written through a closed queue")
}

func testPreparedQueueFull(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{Depth: 4})
	for range 4 {
		require.NoError(t, w.p.Post())
	}
	require.ErrorIs(t, w.p.Post(), urma.ErrAgain)
	e.poll(w.s.jfc, 4)
	require.NoError(t, w.p.Post(), "room again once polled")
	e.pollOK(w.s.jfc)
}

func testPreparedQueueClosed(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{})
	require.NoError(t, w.s.jfs.Close())
	require.ErrorIs(t, w.p.Post(), urma.ErrClosed)
}

func testPreparedRNR(t *testing.T, e *env) {
	rnrRecovered(t, e, func(s sendSide, r recvSide, l *segment.Segment) error {
		return e.prepare(s, jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, UserCtx: 6,
			Local: []segment.SGE{l.SGE(0, 4)}}).Post()
	})
}
