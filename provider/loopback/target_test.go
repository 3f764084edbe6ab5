package loopback_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// sliceRemote wraps a remote in a type that cannot be compared: == on two
// interfaces holding it panics.
type sliceRemote struct {
	ids []uint32
	r   provider.Remote
}

func (s sliceRemote) Desc() provider.JettyDesc   { return s.r.Desc() }
func (sliceRemote) Close() error                 { return nil }
func (s sliceRemote) RawRemote() provider.Remote { return s.r }

// A JFS remembers the last Target it resolved; switching between targets,
// including ones of a type that cannot be compared, must neither panic nor
// send a request to the wrong one.
func TestPostSwitchesTargets(t *testing.T) {
	p := newPair(t)
	wrapped := sliceRemote{ids: []uint32{1}, r: p.remote.RawRemote()}
	wr := func(target provider.Remote) []jetty.WR {
		return []jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, Target: target,
			Local: []jetty.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)}}
	}
	for range 3 {
		require.NoError(t, p.jfs.Post(wr(p.remote)))
		p.pollOne(t, p.jfcA)
		for range 2 {
			require.NoError(t, p.jfs.Post(wr(wrapped)))
			p.pollOne(t, p.jfcA)
		}
		require.ErrorContains(t, p.jfs.Post(wr(sliceRemote{})), "not a remote imported")
	}
	require.NoError(t, p.jfs.Post(wr(p.remote)))
	p.pollOne(t, p.jfcA)
}
