// Package urmanet carries byte streams over URMA Jettys behind net.Conn
// and net.Listener, so that a program written for the net package (net/http,
// gRPC, anything that takes a net.Conn) runs over URMA unchanged: Listen
// and Dial in place of net.Listen and net.Dial, nothing else.
//
// An address names a context and a port: Addr{EID, Port}, written
// "eid:port" with an IPv6 EID in brackets, as net.JoinHostPort does;
// Network() is "urma".
//
// # How it works
//
// Finding a listener. A provider that supports urmanet implements the
// optional interface provider.Ports: a context publishes a Jetty's
// descriptor and token under a 16-bit port, and any context that reaches
// the EID resolves (EID, port) to them through the provider's own control
// path, with no help from the listening application and no out-of-band
// TCP. A provider without it gives urma.ErrNotSupported from Listen and
// Dial.
//
//   - loopback: the context's control server (the unix socket in the
//     runtime directory through which imports already go) keeps the
//     context's published ports; a resolver asks the contexts at the EID
//     in turn (ResolvePort request: {port u32} -> {jetty desc [32],
//     token u32}) and takes the first that has the port. The control
//     connection checks the peer's uid both ways, so the token reaches
//     only processes of the same user.
//   - ib (to follow): each context already has an rdma_cm listener
//     whose port is its UASID, and the ping answers a connect request
//     with a reject that carries data. ResolvePort is the same exchange:
//     the resolver sends a connect request to the EID at a well-known
//     urmanet port (one process of a host listens there, as with
//     ListenPing) whose private data names the port; the listener
//     rejects it with {desc [32], token u32} as the reject's private data
//     (within the 148 bytes a reject carries). PublishPort registers in
//     that listener's table, and ErrNotFound travels as a reject without
//     data.
//
// The handshake runs over URMA itself. A Listener owns an accept Jetty
// (RM, with a small pool of posted receives) published under its port.
// Dial creates the connection's Jetty, posts its receives, resolves the
// listener, imports its accept Jetty and SENDs it a SYN from the new
// Jetty. The listener's accept loop creates a Jetty for the connection,
// posts its receives, imports the dialer's Jetty and SENDs a SYNACK from
// it; the dialer imports that Jetty in turn and both ends are connected.
// A SYN or SYNACK carries {jetty desc [32], token u32, window u32}: the
// Jetty to send to, the token to import it with, and the number of
// receives posted for data (the peer's initial credit). A listener whose
// backlog is full answers a SYN with a RST and Dial fails with
// ErrRefused; a lost SYN is bounded by Dial's context.
//
// Framing. Every message is one SEND into one posted receive, with an
// 8-byte header followed by payload:
//
//	type   u8   DATA, CREDIT, FIN, SYN, SYNACK, RST
//	flags  u8   0
//	_      u16  0
//	credit u32  receives the sender reposted since its last credit
//
// The message's length is the completion record's. DATA carries up to
// SlotSize-8 bytes of the stream; CREDIT carries only its header; FIN
// (CloseWrite or Close) says no DATA follows: the reader gets io.EOF
// after what came before it. Messages arrive in order, each in one
// receive, so the stream is never reordered or split across buffers.
//
// Credits. A connection posts Window receives for DATA and Control more
// for CREDIT and FIN; a writer spends one credit per DATA message and
// waits (within its deadline) when it has none, so a slow reader holds
// back the writer and never loses data or makes the provider queue it
// (RNR never happens in the protocol). A receive goes back to the queue
// when Read consumed its message, and the count of those is returned in
// the header of the next message the reader's side sends, or in a CREDIT
// once half the window is owed. A CREDIT is sent only then, so at most
// two are in flight at a time and the control receives cannot run out.
//
// Completions. Each connection has one JFC with a JFCE; a goroutine per
// connection polls it (PollWait: spin, then park) and hands received
// messages to Read and finished sends back to Write's buffers; Read and
// Write wait on the connection's state with their deadline, so a
// deadline, a Close or a changed deadline wakes them at once. Buffers are
// slots of one segment per connection (receives and sends), so Read and
// Write allocate nothing in steady state.
//
// Close sends FIN when the write side is open, stops the poller and
// closes the Jetty, its JFC and segment; pending and later calls get
// net.ErrClosed. A peer that is gone makes sends fail: Write returns the
// error, and Read returns io.EOF after what arrived.
//
// Next: the ib Ports; large writes without a copy (WRITE into a ring the
// reader registered, and a notification, as rsockets does); RC Jettys
// bound to each other in place of RM sends; benchmarks against TCP and
// unix sockets; net/http and gRPC examples.
package urmanet
