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
