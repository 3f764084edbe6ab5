package loopback_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// sliceRemote is a Remote of no provider, of a type that cannot be
// compared: == on two interfaces holding it panics.
type sliceRemote struct{ ids []uint32 }

func (sliceRemote) Desc() provider.JettyDesc { return provider.JettyDesc{} }
func (sliceRemote) Close() error             { return nil }

// A JFS remembers the last target it resolved; switching between targets,
// including foreign ones of a type that cannot be compared, must neither
// panic nor send a request to the wrong one.
func TestPostSwitchesTargets(t *testing.T) {
	p := newPair(t)
	other, err := jetty.ImportJFR(t.Context(), p.a, p.jfr.Descriptor(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	wr := func(target provider.Remote) []provider.WR {
		return []provider.WR{{Opcode: provider.OpWrite, Flags: provider.FlagSignaled, Target: provider.Ref(target),
			Local: []provider.SGE{p.src.SGE(0, 8).Raw()}, Remote: p.tgt.SGE(0, 8).Raw()}}
	}
	raw := p.jfs.Raw()
	for range 3 {
		_, err := raw.Post(wr(p.remote.Raw()))
		require.NoError(t, err)
		p.pollOne(t, p.jfcA)
		for range 2 {
			_, err := raw.Post(wr(other.Raw()))
			require.NoError(t, err)
			p.pollOne(t, p.jfcA)
		}
		_, err = raw.Post(wr(sliceRemote{ids: []uint32{1}}))
		require.ErrorContains(t, err, "not a remote imported")
	}
	_, err = raw.Post(wr(p.remote.Raw()))
	require.NoError(t, err)
	p.pollOne(t, p.jfcA)
	// One RemoteRef whose Remote changes between posts of one request.
	w := wr(p.remote.Raw())
	for range 2 {
		_, err = raw.Post(w)
		require.NoError(t, err)
		p.pollOne(t, p.jfcA)
	}
	w[0].Target.Remote = sliceRemote{ids: []uint32{2}}
	_, err = raw.Post(w)
	require.ErrorContains(t, err, "not a remote imported")
	w[0].Target.Remote = nil
	_, err = raw.Post(w)
	require.ErrorIs(t, err, provider.ErrInvalid, "a RemoteRef of nothing names no target")
}

// A receive-side record that finds the receiver's JFC full is dropped and
// reported as the JFC's JFC_ERR event, as a send-side one is; the records
// before it stay. Small SENDs reserve their record's slot before copying,
// big ones after: both must report.
func TestRecvRecordOverrunRaisesJFCErr(t *testing.T) {
	for _, size := range []uint32{8, 8192} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			p := newPair(t)
			jfc, err := jetty.NewJFC(p.b, jetty.JFCConfig{Depth: 2, AllowOverrun: true}) // overflows on purpose
			require.NoError(t, err)
			jfr, err := jetty.NewJFR(p.b, jetty.JFRConfig{JFC: jfc, Depth: 8})
			require.NoError(t, err)
			remote, err := jetty.ImportJFR(t.Context(), p.a, jfr.Descriptor(), 0)
			require.NoError(t, err)
			for i := range 3 {
				require.NoError(t, jfr.Recv(p.dst.SGE(0, size), uint64(i)))
			}
			for i := range 3 {
				require.NoError(t, p.jfs.Send(remote, p.src.SGE(0, size), 0, uint64(10+i)))
				p.pollOne(t, p.jfcA)
			}
			ev, err := p.b.GetAsyncEventTimeout(5 * time.Second)
			require.NoError(t, err)
			require.Equal(t, urma.EventJFCErr, ev.Type)
			require.Same(t, jfc, ev.Object)
			require.NoError(t, ev.Ack())
			crs := make([]jetty.CR, 4)
			n, err := jfc.Poll(crs)
			require.NoError(t, err)
			require.Equal(t, 2, n, "the records that fit")
			assert.Equal(t, []uint64{0, 1}, []uint64{crs[0].UserCtx, crs[1].UserCtx})
			require.NoError(t, remote.Close())
			require.NoError(t, jfr.Close())
			require.NoError(t, jfc.Close())
		})
	}
}
