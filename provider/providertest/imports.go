package providertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var importTests = []test{
	{"done context imports nothing", testImportDoneContext},
	{"done context binds nothing", testBindDoneContext},
	{"LOCAL_ONLY is not exported", testImportLocalOnly},
	{"read-only import", testImportReadOnly},
}

// A LOCAL_ONLY segment grants no remote access, so its owner refuses to
// export it: the import fails with ErrPermission and the memory stays
// out of reach, whoever asks.
func testImportLocalOnly(t *testing.T, e *env) {
	s := e.seg(e.b, 64, segment.LocalOnly)
	_, err := segment.Import(e.t.Context(), e.a, s.Descriptor(), 0)
	require.ErrorIs(t, err, urma.ErrPermission)
	require.Contains(t, err.Error(), "LOCAL_ONLY")
}

// A READ-only import reads, and its WRITEs and atomics fail without
// touching the owner's memory.
func testImportReadOnly(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	mem, tg := e.remoteSeg(64, segment.Read)
	fill(mem.Bytes(), 7)
	l := e.seg(e.a, 64, segment.LocalOnly)
	s := e.sender(jetty.JFSConfig{})
	require.NoError(t, s.jfs.Post([]jetty.WR{{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{l.SGE(0, 64)}, Remote: tg.SGE(0, 64)}}))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	require.Equal(t, mem.Bytes(), l.Bytes())
	fill(l.Bytes(), 9)
	expectStatus(t, e, s, jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 64)}, Remote: tg.SGE(0, 64)}, urma.CRRemAccessAbortErr)
	want := make([]byte, 64)
	fill(want, 7)
	require.Equal(t, want, mem.Bytes(), "a WRITE to a READ-only segment changed it")
}

// canceled is a context already canceled.
func (e *env) canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// An import, an advise or a bind may ask the peer; with a context that is
// already done it does not start, and says why in the SDK's convention.
func testImportDoneContext(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	seg := e.seg(e.b, 64, segment.Read|segment.Write)
	for _, c := range []struct {
		name string
		ctx  context.Context
		want []error
	}{
		{"canceled", e.canceled(), []error{context.Canceled}},
		{"past deadline", e.expired(), []error{context.DeadlineExceeded, urma.ErrTimeout}},
	} {
		_, err := jetty.ImportJFR(c.ctx, e.a, r.jfr.Descriptor(), 0)
		for _, w := range c.want {
			require.ErrorIs(t, err, w, "ImportJFR, %s", c.name)
		}
		_, err = segment.Import(c.ctx, e.a, seg.Descriptor(), 0)
		for _, w := range c.want {
			require.ErrorIs(t, err, w, "segment.Import, %s", c.name)
		}
		s := e.sender(jetty.JFSConfig{})
		for _, w := range c.want {
			require.ErrorIs(t, s.jfs.Advise(c.ctx, r.remote), w, "Advise, %s", c.name)
		}
	}
	// A live context imports as before.
	tg, err := segment.Import(e.within(e.timeout), e.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	require.NoError(t, tg.Close())
}

func testBindDoneContext(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.RC) {
		t.Skip("device has no RC mode")
	}
	ja, _, _, _, _, rb := rcJetties(t, e)
	require.ErrorIs(t, ja.Bind(e.canceled(), rb), context.Canceled)
	require.NoError(t, ja.Bind(e.within(e.timeout), rb), "a bind refused for its context left nothing bound")
}
