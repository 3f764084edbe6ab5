package loopback

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// FuzzHandle feeds control requests to a live context's server, as another
// process would send them. The oracle knows the context's two segments and
// one JFR: a request succeeds exactly when it names them correctly, carries
// all of its fields and nothing more, and the peer may have it (a segment
// by handle only as a receive buffer of the JFR it imported), and the
// reply then describes them.
func FuzzHandle(f *testing.F) {
	const segToken, jfrToken = 0x5e65e6, 0x1f41f4
	pc, err := theDevice.Open(0)
	require.NoError(f, err)
	c := pc.(*lbContext)
	f.Cleanup(func() { require.NoError(f, c.Close()) })
	seg, err := c.AllocSegment(4096, provider.SegmentConfig{Access: provider.AccessRead | provider.AccessWrite,
		TokenPolicy: provider.TokenPlainText, Token: segToken})
	require.NoError(f, err)
	// A segment without a token: nothing but the request's shape stands
	// between a peer and an import of it.
	open, err := c.AllocSegment(4096, provider.SegmentConfig{Access: provider.AccessRead})
	require.NoError(f, err)
	jfc, err := c.NewJFC(provider.JFCConfig{Depth: 8})
	require.NoError(f, err)
	jfr, err := c.NewJFR(provider.JFRConfig{Depth: 4, MaxSGE: 1, Mode: provider.RM,
		TokenPolicy: provider.TokenPlainText, Token: jfrToken, JFC: jfc})
	require.NoError(f, err)
	f.Cleanup(func() {
		require.NoError(f, jfr.Close())
		require.NoError(f, jfc.Close())
		require.NoError(f, open.Close())
		require.NoError(f, seg.Close())
	})

	// seg is a receive buffer of jfr; open is not.
	_, err = jfr.PostRecv([]provider.RecvWR{{Local: []provider.SGE{{Seg: seg, Addr: seg.Desc().VA, Len: 64}}}})
	require.NoError(f, err)
	// Refusals are not slowed down here: the fuzzer makes them by the
	// thousand.
	c.srv.fails.every = 0

	segs := map[provider.SegmentDesc]uint32{seg.Desc(): segToken, open.Desc(): 0}
	u32 := func(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
	segDesc, _ := seg.Desc().MarshalBinary()
	openDesc, _ := open.Desc().MarshalBinary()
	jfrDesc, _ := jfr.Desc().MarshalBinary()
	lseg, lopen := seg.(*segment), open.(*segment)
	// Random bytes never name a live object, so a request is a known
	// prefix (a descriptor or a handle, picked by the fuzzer) followed by
	// bytes the fuzzer makes up: the checks after the names get explored.
	prefixes := [][]byte{
		nil,
		segDesc,
		openDesc,
		jfrDesc,
		u32(u32(nil, lseg.handle), lseg.ref.gen),
		u32(u32(nil, lopen.handle), lopen.ref.gen),
	}

	f.Add(uint8(wire.ImportSeg), uint8(1), u32(nil, segToken))
	f.Add(uint8(wire.ImportSeg), uint8(1), u32(nil, segToken+1))
	f.Add(uint8(wire.ImportSeg), uint8(2), u32(nil, 0))
	f.Add(uint8(wire.ImportSeg), uint8(0), u32(append([]byte{}, openDesc...), 0))
	f.Add(uint8(wire.SegFD), uint8(4), []byte{})
	f.Add(uint8(wire.SegFD), uint8(0), u32(nil, lseg.handle))
	f.Add(uint8(wire.ImportJetty), uint8(3), u32(nil, jfrToken))
	f.Add(uint8(wire.ImportJetty), uint8(3), []byte{1, 2, 3})
	f.Add(uint8(wire.List), uint8(0), []byte{})
	f.Add(uint8(wire.Hello), uint8(0), u32(nil, 1))
	f.Add(uint8(wire.Notify), uint8(0), u32(nil, 1))
	f.Add(uint8(0), uint8(0), []byte{})
	f.Add(uint8(200), uint8(0), []byte{})

	jfrImport := u32(append([]byte{}, jfrDesc...), jfrToken)
	f.Add(uint8(wire.SegFD), uint8(0x84), []byte{})
	f.Add(uint8(wire.SegFD), uint8(0x85), []byte{})
	// Invalidations with and without an imported queue and the token,
	// and pings.
	f.Add(uint8(wire.InvalidateSeg), uint8(0x81), u32(nil, segToken))
	f.Add(uint8(wire.InvalidateSeg), uint8(0x81), u32(nil, segToken+1))
	f.Add(uint8(wire.InvalidateSeg), uint8(1), u32(nil, segToken))
	f.Add(uint8(wire.Ping), uint8(0), []byte("0"))
	f.Add(uint8(wire.Ping), uint8(0), []byte{})
	// A port request for a port nobody published, and a malformed one.
	f.Add(uint8(wire.ResolvePort), uint8(0), u32(nil, 80))
	f.Add(uint8(wire.ResolvePort), uint8(0), []byte{1})

	f.Fuzz(func(t *testing.T, typ, prefix uint8, tail []byte) {
		payload := append(append([]byte{}, prefixes[int(prefix&0x7f)%len(prefixes)]...), tail...)
		cc := newCtlConn(nil, 1)
		defer cc.release()
		cc.fails.every = 0
		imported := prefix&0x80 != 0 // the peer imported the JFR first
		if imported {
			reply, fds := c.srv.handle(cc, wire.Message{Type: wire.ImportJetty, Payload: jfrImport})
			require.Equal(t, provider.StatusSuccess, reply.Status, "%s", reply.Payload)
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
		reply, fds := c.srv.handle(cc, wire.Message{Type: wire.Type(typ), Payload: payload})
		defer func() {
			for _, fd := range fds {
				unix.Close(fd)
			}
		}()
		require.Equal(t, wire.Type(typ), reply.Type)
		require.Equal(t, reply.FDs, fds)
		if reply.Status != provider.StatusSuccess {
			require.Empty(t, fds, "a refusal must not hand out descriptors")
		}
		switch wire.Type(typ) {
		case wire.ImportSeg:
			var d provider.SegmentDesc
			var token uint32
			ok := false
			if len(payload) == provider.SegmentDescSize+4 && d.UnmarshalBinary(payload[:provider.SegmentDescSize]) == nil {
				token = binary.LittleEndian.Uint32(payload[provider.SegmentDescSize:])
				if want, known := segs[d]; known {
					ok = d.TokenPolicy == provider.TokenNone || token == want
				}
			}
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "import of %v with token %#x: %v %s",
				d, token, reply.Status, reply.Payload)
			if !ok {
				return
			}
			r, decoded := wire.DecodeSegReply(reply.Payload)
			require.True(t, decoded)
			require.Equal(t, []any{d.VA, d.Len, d.Access}, []any{r.VA, r.Len, r.Access})
			require.Len(t, fds, 1, "allocated memory travels as a memfd")
		case wire.SegFD:
			ok := imported && len(payload) == 8 && binary.LittleEndian.Uint32(payload) == lseg.handle &&
				binary.LittleEndian.Uint32(payload[4:]) == lseg.ref.gen
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "%v %s", reply.Status, reply.Payload)
		case wire.ImportJetty:
			ok := len(payload) == provider.JettyDescSize+4 && bytes.Equal(payload[:provider.JettyDescSize], jfrDesc) &&
				binary.LittleEndian.Uint32(payload[provider.JettyDescSize:]) == jfrToken
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "%v %s", reply.Status, reply.Payload)
			if !ok {
				return
			}
			r, decoded := wire.DecodeJettyReply(reply.Payload)
			require.True(t, decoded)
			require.Equal(t, jfr.Desc().ID.ID, r.ID)
			require.NotZero(t, r.InboxCells, "every queue has an inbox")
			require.Len(t, fds, 3+int(r.HasEventfd))
		case wire.ImportGroup:
			require.NotEqual(t, provider.StatusSuccess, reply.Status, "the context has no jetty group")
		case wire.InvalidateSeg:
			// Only a peer that imported a queue, naming a segment with
			// its token, invalidates it; the segment is made live again
			// so that every input meets the same context.
			var d provider.SegmentDesc
			ok := false
			if imported && len(payload) == provider.SegmentDescSize+4 && d.UnmarshalBinary(payload[:provider.SegmentDescSize]) == nil {
				if want, known := segs[d]; known {
					ok = d.TokenPolicy == provider.TokenNone || binary.LittleEndian.Uint32(payload[provider.SegmentDescSize:]) == want
				}
			}
			require.Equal(t, ok, reply.Status == provider.StatusSuccess, "invalidate of %v: %v %s", d, reply.Status, reply.Payload)
			require.Empty(t, fds)
			for _, s := range []*segment{lseg, lopen} {
				s.ref.ent.state.CompareAndSwap(segRevoked, segLive)
			}
		case wire.Ping:
			require.Equal(t, provider.StatusSuccess, reply.Status, "%s", reply.Payload)
			require.Equal(t, payload, reply.Payload, "a ping is answered with its own bytes")
			require.Empty(t, fds)
		case wire.ResolvePort:
			require.NotEqual(t, provider.StatusSuccess, reply.Status, "the context publishes no port")
		case wire.List:
			require.Equal(t, provider.StatusSuccess, reply.Status)
			var ci ContextInfo
			require.NoError(t, json.Unmarshal(reply.Payload, &ci))
		case wire.Hello:
			require.Equal(t, provider.StatusSuccess, reply.Status)
			require.Len(t, fds, 2, "the context page and the connection's count page")
		default:
			require.Equal(t, provider.StatusNotSupported, reply.Status)
		}
	})
}
