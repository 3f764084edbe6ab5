package loopback_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// TestInboxPreparedStream streams prepared SENDs of one to four inbox
// cells, from memory and inline, with and without immediate data and the
// solicited flag, through a route that is not the first of the inbox (a
// second queue took that one after the requests were prepared): each
// message arrives with the bytes its memory held at its Post, the
// immediate data set just before it, and the name of the queue that sent
// it.
func TestInboxPreparedStream(t *testing.T) {
	const n = 200 // below the JFR's depth: every receive is posted first
	p := newPair(t)
	inline := make([]byte, 3)
	kinds := []struct {
		wr   jetty.WR
		data []byte // the bytes the request sends, changed before each post
	}{
		{jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(0, 8)}}, p.src.Bytes()[0:8]},
		{jetty.WR{Opcode: urma.OpSendImm, Flags: jetty.Solicited, Local: []segment.SGE{p.src.SGE(100, 9)}}, p.src.Bytes()[100:109]},
		{jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(200, 80)}}, p.src.Bytes()[200:280]},
		{jetty.WR{Opcode: urma.OpSendImm, Flags: jetty.Inline, Inline: inline}, inline},
		{jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(300, 0)}}, nil},
	}
	prs := make([]*jetty.Prepared, len(kinds))
	for i, k := range kinds {
		k.wr.Flags |= jetty.Signaled
		k.wr.To = p.remote
		pr, err := p.jfs.Prepare(k.wr)
		require.NoError(t, err, "kind %d", i)
		prs[i] = pr
	}

	// Another queue streams first and keeps the inbox's first route.
	other, err := jetty.NewJFS(p.a, jetty.JFSConfig{JFC: p.jfcA})
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	for i := range 2 {
		require.NoError(t, p.jfr.Recv(p.dst.SGE(0, 128), uint64(1000+i)))
		require.NoError(t, other.Send(p.remote, p.src.SGE(0, 4), 0, uint64(1000+i)))
	}
	pollN(t, p.jfcB, 2, 5*time.Second)
	pollN(t, p.jfcA, 2, 5*time.Second)
	for i := range n {
		require.NoError(t, p.jfr.Recv(p.dst.SGE(uint64(i)*128, 128), uint64(i)))
	}
	before := loopback.InboxConsumed(p.jfr.Raw())

	want := make([][]byte, n)
	for i := range n {
		k, pr := kinds[i%len(kinds)], prs[i%len(kinds)]
		for j := range k.data {
			k.data[j] = byte(i*31 + j)
		}
		want[i] = append([]byte{}, k.data...)
		pr.SetUserCtx(uint64(i))
		pr.SetImm(uint64(i) << 16)
		for {
			err := pr.Post()
			if err == nil {
				break
			}
			require.ErrorIs(t, err, urma.ErrAgain)
			pollN(t, p.jfcA, 1, 5*time.Second)
		}
	}
	recvs := pollN(t, p.jfcB, n, 5*time.Second)
	sender, err := p.jfs.Query()
	require.NoError(t, err)
	for i, cr := range recvs {
		k := kinds[i%len(kinds)]
		what := fmt.Sprintf("message %d: %v", i, cr)
		require.Equal(t, urma.CRSuccess, cr.Status, what)
		require.Equal(t, uint64(i), cr.UserCtx, "out of order: "+what)
		require.Equal(t, uint32(len(want[i])), cr.Len, what)
		require.Equal(t, want[i], p.dst.Bytes()[uint64(i)*128:uint64(i)*128+uint64(cr.Len)], what)
		require.Equal(t, crOpOf(k.wr.Opcode), cr.Opcode, what)
		if k.wr.Opcode == urma.OpSendImm {
			require.Equal(t, uint64(i)<<16, cr.Imm, what)
		}
		require.Equal(t, k.wr.Flags&jetty.Solicited != 0, cr.Flags&jetty.CRSolicited != 0, what)
		require.Equal(t, sender.ID, cr.RemoteID, "named another sender: "+what)
	}
	require.Greater(t, loopback.InboxConsumed(p.jfr.Raw())-before, uint64(n/2), "the prepared SENDs did not go through the inbox")
}
