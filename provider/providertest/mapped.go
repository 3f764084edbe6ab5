package providertest

import (
	"bytes"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var mappedTests = []test{
	{"read-write", testMappedReadWrite},
	{"read-only", testMappedReadOnly},
}

// A device without mapped imports (DeviceAttr.MapImports false) refuses
// Map with ErrNotSupported, whatever the grant; one with them maps the
// owner's memory itself.
func testMappedReadWrite(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	mem, tg := e.remoteSeg(4096, segment.Read|segment.Write|segment.Atomic)
	mp, err := tg.Map(t.Context(), segment.Read|segment.Write)
	if !e.attr.MapImports {
		require.ErrorIs(t, err, urma.ErrNotSupported)
		require.Contains(t, err.Error(), "MapImports")
		require.Nil(t, mp)
		return
	}
	require.NoError(t, err)
	defer mp.Unmap()
	require.Equal(t, 4096, mp.Len())
	b, err := mp.Bytes()
	require.NoError(t, err)
	require.Len(t, b, 4096)

	// The owner's stores are the importer's loads, and the other way.
	fill(mem.Bytes(), 3)
	require.Equal(t, mem.Bytes(), b)
	fill(b[100:200], 5)
	require.Equal(t, b, mem.Bytes())

	// A WRITE and an atomic through the same import land in the mapping.
	src := e.seg(e.a, 64, segment.LocalOnly)
	fill(src.Bytes(), 11)
	s := e.sender(jetty.JFSConfig{})
	require.NoError(t, s.jfs.Post([]jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{src.SGE(0, 64)}, Remote: tg.SGE(512, 64)}}))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	got := make([]byte, 64)
	n, err := mp.ReadAt(got, 512)
	require.NoError(t, err)
	require.Equal(t, 64, n)
	require.Equal(t, src.Bytes(), got)
	if e.attr.AtomicOps.Has(urma.OpFAdd) {
		require.NoError(t, mp.StoreUint64(1024, 40))
		require.NoError(t, s.jfs.Post([]jetty.WR{{Opcode: urma.OpFAdd, Flags: jetty.Signaled, To: r.remote, Operand: 2,
			Local: []segment.SGE{src.SGE(0, 8)}, Remote: tg.SGE(1024, 8)}}))
		cr = e.poll(s.jfc, 1)[0]
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		v, err := mp.LoadUint64(1024)
		require.NoError(t, err)
		require.Equal(t, uint64(42), v)
	}

	require.NoError(t, mp.Unmap())
	_, err = mp.Bytes()
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = mp.ReadAt(got, 0)
	require.ErrorIs(t, err, net.ErrClosed)
	require.NoError(t, mp.Unmap(), "Unmap is idempotent")
}

// A READ-only grant maps for reading: the bytes are there to read, and
// nothing hands out memory a store could reach.
func testMappedReadOnly(t *testing.T, e *env) {
	mem, tg := e.remoteSeg(4096, segment.Read)
	_, err := tg.Map(t.Context(), segment.Read|segment.Write)
	require.ErrorIs(t, err, urma.ErrPermission, "a READ-only grant is never mapped for writing")
	mp, err := tg.Map(t.Context(), segment.Read)
	if !e.attr.MapImports {
		require.ErrorIs(t, err, urma.ErrNotSupported)
		return
	}
	require.NoError(t, err)
	defer mp.Unmap()
	fill(mem.Bytes(), 21)
	got := make([]byte, 4096)
	n, err := mp.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, 4096, n)
	require.Equal(t, mem.Bytes(), got)
	b, err := mp.Bytes()
	require.ErrorIs(t, err, urma.ErrPermission)
	require.Nil(t, b)
	_, err = mp.WriteAt([]byte{1}, 0)
	require.ErrorIs(t, err, urma.ErrPermission)
	require.ErrorIs(t, mp.StoreUint64(0, 1), urma.ErrPermission)
	require.True(t, bytes.Equal(mem.Bytes(), got), "a refused store changed nothing")
}
