package urmanet_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamMixedSizes streams data in writes from a byte to beyond the
// ring's size, through the send buffers and the ring in turn, read back
// in reads of other sizes, and checks every byte arrives once and in
// order.
func TestStreamMixedSizes(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, c1, c2 := pipe(t, server, client)
	defer l.Close()
	defer c1.Close()
	defer c2.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 12<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	sizes := []int{1, 100, 8 << 10, 8<<10 + 1, 32 << 10, 64<<10 + 3, 300 << 10, 1 << 20, 1<<20 + 5<<10}
	errc := make(chan error, 1)
	go func() {
		rest := data
		for i := 0; len(rest) > 0; i++ {
			k := min(len(rest), sizes[i%len(sizes)])
			if _, err := c1.Write(rest[:k]); err != nil {
				errc <- err
				return
			}
			rest = rest[k:]
		}
		errc <- c1.(interface{ CloseWrite() error }).CloseWrite()
	}()
	var got bytes.Buffer
	buf := make([]byte, 200<<10)
	for i := 0; ; i++ {
		n, err := c2.Read(buf[:1+(i*7919)%len(buf)])
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.NoError(t, <-errc)
	require.Equal(t, len(data), got.Len())
	require.True(t, bytes.Equal(data, got.Bytes()), "stream differs")
}
