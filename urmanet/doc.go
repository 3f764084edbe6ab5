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
//   - ib (to follow): a context's UASID is already the rdma_cm port of
//     its listener, which answers imports and pings with a reject that
//     carries data (provider/ib proto.go: 56-byte request, 40-byte reply,
//     148 bytes of reject data on IB and RoCE). PublishPort opens one more
//     rdma_cm listener, on the EID's address at the urmanet port itself
//     (cmListen, as ListenPing does at PingPort), whose loop answers a
//     new request op, opResolvePort (7), with a reject carrying the
//     40-byte reply and then {jetty desc [32], token u32}, the way group
//     imports append member ids; any other op gets replyNotFound.
//     ResolvePort is c.dial(ctx, dst, port, request{op: opResolvePort})
//     and reads the reject, as Ping does. urmanet ports and UASIDs then
//     share the host's rdma_cm port space: a port some context holds as
//     its UASID gives ErrExist to PublishPort, like a TCP port in use,
//     and answers ResolvePort with ErrNotFound.
//
// On loopback a port is held per context, and two contexts at one EID may
// publish the same port (the resolver takes the lower UASID); making it
// one per EID, as on ib, needs a claim in the runtime directory (an
// exclusive link named by EID and port, swept like the sockets).
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
// Both Jettys are RM, each sending only to the other: RM reaches the one
// peer reliably and in order on both providers (on verbs, RM is one RC QP
// per remote), and the dialer's SYN goes from the connection's own Jetty
// before the listener's connection Jetty exists, which a bound RC Jetty
// could not do. Binding RC Jettys once the handshake is over is an
// option that saves the per-request target; it changes nothing on the
// wire.
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
// once half the window is owed. The DATA a peer sends is at most Window
// plus the credit it has taken in, so the credit reported to it and not
// yet taken in is at most Window; a CREDIT reports at least Window/2, so
// at most two are unread at a time, which with a FIN leaves a control
// receive spare: they cannot run out.
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
// Limits of this version: a listener shakes hands in its one serving
// goroutine (a dialer whose Jetty cannot be imported holds the others up
// to 5 s); Read and Write copy through the slots. A peer that dies
// without its FIN fails the sends in flight, and so the Write that made
// them, but a Read with nothing to read, or a Write waiting for credit,
// waits for its deadline: nothing is sent that could fail. The remedy
// planned is a probe: a waiter that has waited a second sends a CREDIT
// carrying no credit, whose failure fails the connection (open: a
// stopped peer leaves probes unread, so the control receives must grow
// by one and a probe wait until the peer shows it took the last in); on loopback a
// bound RC Jetty also goes to ERROR when the peer's process is lost,
// which a per-Jetty error signal could report sooner.
//
// Next, in order:
//
//   - ib: provider.Ports as above, and the conformance of Listen and
//     Dial on rxe and siw in the VM.
//   - Large writes (the plan): each end allocates a receive ring, a
//     segment with remote write access under a token, and names it in
//     its SYN and SYNACK (SegmentDesc [48] and token u32 after the
//     window); the peer imports it. A Write of at least a threshold
//     (several slots) WRITEs straight from the caller's buffer,
//     registered for the call (segment.Register; cached by address for
//     repeated buffers), into the ring at the writer's tail (split in two
//     at the wrap), then SENDs a RING message {off u32, len u32} after
//     the header; the reader copies from the ring and returns ring bytes
//     in a second credit field of its headers (the header grows to 16
//     bytes). This saves the copy into a send slot: one copy by the
//     provider and one by Read, as rsockets does with its receive
//     buffers, and one receive per large write instead of one per slot.
//   - Benchmarks against TCP and unix sockets (bench/, like for like:
//     message sizes 64 B to 1 MiB, ping-pong and streaming).
//   - A gRPC example beside the net/http one.
package urmanet
