package view_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

func openLoopback(t testing.TB) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	ctx, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func TestLayoutListGathersInOrder(t *testing.T) {
	ctx := openLoopback(t)
	a, err := segment.Alloc(ctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	b, err := segment.Alloc(ctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	copy(a.Bytes(), "0123456789")
	copy(b.Bytes(), "abcdefghij")
	l := view.Layout{Entries: []view.LayoutEntry{{Mem: b, Off: 2, Bytes: 3}, {Mem: a, Off: 5, Bytes: 4}, {Mem: b, Off: 0, Bytes: 1}}}
	require.NoError(t, l.Validate())
	require.Equal(t, uint64(8), l.Len())
	out := make([]byte, 8)
	require.NoError(t, l.Gather(out))
	require.Equal(t, "cde5678a", string(out))

	require.NoError(t, l.Scatter([]byte("XYZ----!")))
	require.Equal(t, "!bXYZfghij", string(b.Bytes()[:10]))
	require.Equal(t, "01234----9", string(a.Bytes()[:10]))
}

// The storage example's chunks: 4048 bytes of data and 48 of metadata in
// each 4096-byte chunk, read as one stream of data then metadata.
func TestLayoutInterleavedChunks(t *testing.T) {
	ctx := openLoopback(t)
	const chunks, data, meta = 3, 4048, 48
	s, err := segment.Alloc(ctx, chunks*(data+meta), segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	for c := 0; c < chunks; c++ {
		chunk := s.Bytes()[c*(data+meta):]
		copy(chunk[:data], bytes.Repeat([]byte{byte('a' + c)}, data))
		copy(chunk[data:data+meta], bytes.Repeat([]byte{byte('A' + c)}, meta))
	}
	l := view.Layout{Repeat: chunks, Entries: []view.LayoutEntry{
		{Mem: s, Off: 0, Bytes: data, Skip: meta},
		{Mem: s, Off: data, Bytes: meta, Skip: data},
	}}
	require.NoError(t, l.Validate())
	require.Equal(t, uint64(chunks*(data+meta)), l.Len())
	var pieces []view.Piece
	for p := range l.Pieces() {
		pieces = append(pieces, p)
	}
	require.Len(t, pieces, 2*chunks)
	require.Equal(t, uint64(2*(data+meta)+data), pieces[5].Off, "metadata of chunk 2")
	out := make([]byte, l.Len())
	require.NoError(t, l.Gather(out))
	require.Equal(t, s.Bytes(), out, "data|meta repeated reads back as the chunks themselves")

	// Data only, every chunk's metadata skipped: a plain stream of data.
	dataOnly := view.Layout{Repeat: chunks, Entries: []view.LayoutEntry{{Mem: s, Bytes: data, Skip: meta}}}
	plain := make([]byte, dataOnly.Len())
	require.NoError(t, dataOnly.Gather(plain))
	for c := 0; c < chunks; c++ {
		require.Equal(t, bytes.Repeat([]byte{byte('a' + c)}, data), plain[c*data:(c+1)*data])
	}
}

func TestLayoutRefusals(t *testing.T) {
	ctx := openLoopback(t)
	s, err := segment.Alloc(ctx, 4096, segment.Config{Access: segment.Read})
	require.NoError(t, err)
	for name, l := range map[string]view.Layout{
		"no entries":  {},
		"no memory":   {Entries: []view.LayoutEntry{{Bytes: 1}}},
		"empty entry": {Entries: []view.LayoutEntry{{Mem: s}}},
		"negative":    {Repeat: -1, Entries: []view.LayoutEntry{{Mem: s, Bytes: 1}}},
	} {
		require.ErrorIs(t, l.Validate(), urma.ErrInvalid, name)
	}
	past := view.Layout{Repeat: 5, Entries: []view.LayoutEntry{{Mem: s, Bytes: 1000, Skip: 24}}}
	require.ErrorIs(t, past.Validate(), urma.ErrRange, "the 5th repetition ends at 5096, past 4096")
	past.Repeat = 4 // the last ends at 4072
	require.NoError(t, past.Validate())
	require.ErrorIs(t, past.Gather(make([]byte, 10)), urma.ErrInvalid, "buffer of the wrong size")

	peer := openLoopback(t)
	tg, err := segment.Import(context.Background(), peer, s.Descriptor(), 0)
	require.NoError(t, err)
	remote := view.Layout{Entries: []view.LayoutEntry{{Mem: tg, Bytes: 8}}}
	require.NoError(t, remote.Validate(), "a layout may describe imported memory")
	require.ErrorIs(t, remote.Gather(make([]byte, 8)), urma.ErrInvalid, "whose bytes move only by WRITE and READ")
}

// Protect two 512-byte blocks with CRC32 signatures, then find the block
// a corrupted byte is in.
func ExampleSignature() {
	sig := view.Signature{Kind: view.SigCRC32, BlockSize: view.Block512}
	plain := bytes.Repeat([]byte("urma"), 2*512/4)
	n, err := sig.ProtectedLen(len(plain))
	if err != nil {
		log.Fatal(err)
	}
	prot := make([]byte, n)
	if err := sig.Insert(prot, plain); err != nil {
		log.Fatal(err)
	}
	fmt.Println("protected bytes:", n)

	prot[512+4+7] ^= 0xff // corrupt block 1
	err = sig.Check(prot)
	fmt.Println(errors.Is(err, urma.ErrSignature))
	var se *view.SigError
	if errors.As(err, &se) {
		fmt.Println("bad block:", se.Block)
	}
	// Output:
	// protected bytes: 1032
	// true
	// bad block: 1
}

// Read the data of 4096-byte storage chunks (4048 bytes of data, 48 of
// metadata each) as one stream, the metadata skipped.
func ExampleLayout() {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := urma.Open(dev, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	chunks, err := segment.Alloc(ctx, 2*4096, segment.Config{Access: segment.LocalOnly})
	if err != nil {
		log.Fatal(err)
	}
	defer chunks.Unregister()
	copy(chunks.Bytes()[4048:], "meta-0")
	copy(chunks.Bytes()[4096:], "data-1")

	data := view.Layout{Repeat: 2, Entries: []view.LayoutEntry{{Mem: chunks, Bytes: 4048, Skip: 48}}}
	stream := make([]byte, data.Len())
	if err := data.Gather(stream); err != nil {
		log.Fatal(err)
	}
	fmt.Println(data.Len(), string(stream[4048:4054]))
	// Output: 8096 data-1
}
