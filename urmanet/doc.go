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
//   - ib: a context's UASID is already the rdma_cm port of its listener,
//     which answers imports and pings with a reject that carries data
//     (provider/ib proto.go: 56-byte request, 40-byte reply, 148 bytes of
//     reject data on IB and RoCE). A published port is one more rdma_cm
//     listener, on the EID's address at the urmanet port itself, that
//     answers a port request (opResolvePort, 7) with a reject carrying the
//     reply and then {jetty desc [32], token u32}, and any other request
//     with ErrNotFound; closing the publication, or the context, closes
//     it. ResolvePort sends the request to (EID, port) and reads the
//     reject. urmanet ports and UASIDs share the host's rdma_cm port space
//     per address: a port some context holds as its UASID, or another
//     context's publication, gives ErrExist to PublishPort, like a TCP
//     port in use, and a UASID answers ResolvePort with ErrNotFound.
//     Whoever reaches the EID can resolve a port; the Jetty's token
//     protects it, as it does any exported Jetty. Listen and Dial run on
//     Soft-RoCE (rxe) and soft-iWARP (siw) in the VM job.
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
// A SYN or SYNACK carries {jetty desc [32], token u32, window u32, ring
// desc [48], ring size u32}: the Jetty to send to, the token to import it
// and the ring with, the number of receives posted for data (the peer's
// initial credit) and the ring for large writes. A listener whose
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
// Framing. Every message is one SEND into one posted receive, with a
// 16-byte header followed by payload:
//
//	type   u8   DATA, CREDIT, FIN, SYN, SYNACK, RST, RING
//	flags  u8   0
//	_      u16  0
//	credit u32  receives the sender reposted since its last credit
//	ring   u32  bytes of the sender's ring read since it last said
//	_      u32  0
//
// The message's length is the completion record's. DATA carries up to
// SlotSize-16 bytes of the stream; CREDIT carries only its header; FIN
// (CloseWrite or Close) says no DATA follows: the reader gets io.EOF
// after what came before it. A SYN or SYNACK also names the sender's
// ring (segment descriptor [48], size u32). Messages arrive in order,
// each in one receive, so the stream is never reordered or split across
// buffers.
//
// Large writes. Each end allocates a ring (RingSize bytes, remote write
// and read access under the connection's token) and names it in its SYN
// or SYNACK; the peer imports it. A Write of bigWrite bytes or more
// registers the caller's buffer (kept registered for the next Write from
// the same buffer), WRITEs it straight into the peer's ring at the
// writer's tail, in parts that do not cross the ring's end, and announces
// each part with a RING message {count u64}; Write returns once its
// WRITEs completed, so the buffer is the caller's again. The reader copies
// out of the ring and returns the bytes in the ring field of its headers.
// A large write costs one copy by the provider and one by Read, and one
// message per part instead of one per SlotSize.
//
// Credits. A connection posts Window receives for DATA and RING and
// Control more for CREDIT and FIN; a writer spends one credit per DATA or
// RING message, and ring bytes for a RING's part, and waits (within its
// deadline) when it has not enough, so a slow reader holds back the
// writer and never loses data or makes the provider queue it (RNR never
// happens in the protocol). A receive goes back to the queue when Read
// consumed its message, and the count of those is returned in the header
// of the next message the reader's side sends, or in a CREDIT once half
// the window (or half the ring) is owed. The DATA a peer sends is at most
// Window plus the credit it has taken in, so the credit reported to it and
// not yet taken in is at most Window; a CREDIT reports at least Window/2
// receives or half the ring, so at most four are unread at a time, which
// with a FIN leaves a control receive spare: they cannot run out. A peer
// that returns more than it was sent, or announces ring bytes outside the
// ring, fails the connection.
//
// Completions. Each connection has one JFC (with a JFCE unless it
// polls). There is no goroutine per connection or message: a Read or
// Write that has to wait polls the JFC itself, under the connection's
// lock so that messages are handled in order whoever takes them, and
// spins before it parks, so that an RPC-style exchange costs no wake-up.
// The spin lasts spinFor (long enough for a round trip between processes
// of a host) while waits end within it; each wait that outlasts it halves
// the next one's, so that a connection whose answers come slower (a
// server that computes, gRPC) parks at once instead of taking a core from
// the work it waits for, and one wait in spinRetry spins in full to find
// out whether answers got quick again. A waiter past its spin arms the
// JFC and sleeps on the JFCE itself (the goroutine the event wakes is the
// one that waits, with no hand-off); a second waiter meanwhile sleeps on
// a channel that the first, or whoever takes records, wakes. A deadline
// that passes while a waiter sleeps on the JFCE kicks it with a READ of
// the peer's ring, whose record raises the event; Close ends the sleep
// through its context. With Dialer.Poll or ListenConfig.Poll the JFC has
// no JFCE and waiters spin until their condition, deadline or Close
// (yielding to the scheduler now and then). Buffers are slots of one
// segment per connection, so Read and Write allocate nothing in steady
// state.
//
// Lost peers. A peer that dies without its FIN fails the requests sent to
// it, and so the Write that made them; a Read with nothing to read, or a
// Write waiting for credit, has nothing to fail. So while a Read or Write
// waits and nothing came from the peer for a tick of probeEvery, the
// connection READs a few bytes of the peer's ring: a one-sided request
// that asks nothing of the peer's process (a peer slow to read is not
// mistaken for a lost one) and fails when the peer is gone. That failure,
// or any request's ack timeout, fails the connection with ErrPeerLost and
// wakes the waiters: on loopback within a few probe ticks of the death;
// on ib once the READ's transport retries give up (the Jetty's
// err_timeout).
//
// Close sends FIN when the write side is open, waits (up to a second) for
// it to be taken, stops the parker and closes the Jetty, its JFC and
// segments; pending and later calls get net.ErrClosed. A peer's FIN gives
// io.EOF after what arrived.
//
// Limits of this version: a listener shakes hands in its one serving
// goroutine (a dialer whose Jetty cannot be imported holds the others up
// to 5 s); a small write is copied into a send slot (one copy more than a
// large one); each connection's ring is allocated at the handshake
// whether large writes come or not.
package urmanet
