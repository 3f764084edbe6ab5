package loopback

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// A ping needs no greeting and gets its bytes back; one longer than
// wire.MaxPing is not read: the owner hangs up.
func TestPingWire(t *testing.T) {
	c := openOwner(t)
	conn := rawDial(t, c)
	for _, n := range []int{0, 1, wire.MaxPing} {
		payload := bytes.Repeat([]byte{0xa5}, n)
		m := rawCall(t, conn, wire.Ping, payload)
		require.Equal(t, provider.StatusSuccess, m.Status)
		require.Empty(t, m.FDs)
		require.Equal(t, payload, m.Payload, "%d bytes", n)
	}

	conn = rawDial(t, c)
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	hdr := make([]byte, wire.HeaderSize)
	hdr[0] = byte(wire.Ping)
	binary.LittleEndian.PutUint32(hdr[8:], wire.MaxPing+1)
	_, err := conn.Write(hdr)
	require.NoError(t, err)
	_, err = wire.Read(conn, wire.ReplyLimit, 0)
	require.Error(t, err)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the owner left the connection open")
}
