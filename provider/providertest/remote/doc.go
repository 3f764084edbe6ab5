// Package remote runs a URMA context in another process and drives it from
// a test through the ordinary public API (urma, segment, jetty).
//
// The peer is a re-executed copy of the test binary. Its TestMain must call
// MaybeServe first:
//
//	func TestMain(m *testing.M) {
//		remote.MaybeServe()
//		os.Exit(m.Run())
//	}
//
// A test then starts a peer and opens contexts in it:
//
//	p, err := remote.Start()
//	...
//	defer p.Close()
//	ctx, err := p.Open("loopback0", 0) // a *urma.Context living in the peer
//
// Every provider call on such a context and on the objects made from it
// (segments, targets, remotes, JFCE, JFC, JFS, JFR, Jetty, async events,
// token ids) is forwarded to the peer, which performs it on the real
// provider of the named device and answers with the result. Errors keep
// their status, so errors.Is(err, urma.ErrInvalid) and friends work across
// the process boundary. The provider's Owner values (the SDK's wrappers)
// stay in this process: JFCE.Wait and async events return the same
// *jetty.JFC or *jetty.JFS the test created.
//
// # Memory
//
// Segment.Bytes of an allocated segment is the peer's memory itself when
// the peer's provider implements provider.SharedMemory: this process maps
// the same memfd. Caller memory for segment.Register must come from
// Peer.CallerMemory (or the context's CallerMemory, see
// CallerMemoryProvider), which the peer can register as its own; other
// buffers are refused with an error wrapping provider.ErrNotSupported.
//
// # Peer death
//
// When the peer process dies or its connection is closed, every call on
// its contexts and objects, including calls already blocked in the peer
// (JFCE.Wait, GetAsyncEvent), fails at once with an error wrapping
// provider.ErrClosed; Close methods return nil. A stopped peer (SIGSTOP)
// simply does not answer until it is continued, as a real process would.
package remote
