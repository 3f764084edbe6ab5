package urmanet_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSteadyStateAllocs checks that a Write and the Read of it allocate
// nothing once the connection is up.
func TestSteadyStateAllocs(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, c1, c2 := pipe(t, server, client)
	defer l.Close()
	defer c1.Close()
	defer c2.Close()
	// 512 bytes go through the send buffers, 256 KiB through the ring.
	for _, size := range []int{512, 256 << 10} {
		w, r := make([]byte, size), make([]byte, size)
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := c1.Write(w); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c2, r); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "%d bytes", size)
	}
}
