// Package loopback is the software URMA provider: no hardware, no cgo.
//
// Importing it for its side effect registers the provider "loopback" with
// one device, "loopback0", whose EID table holds ::ffff:127.0.0.1 to
// ::ffff:127.0.0.4. Contexts opened on it reach each other within one
// process and across the processes of one host (of one user), with real
// one-sided semantics: WRITE, READ and atomics run in the initiator directly
// on the target's memory, so the target's CPU takes no part, and atomics are
// CPU atomics on that memory, atomic against the target's own atomics.
//
// # Across processes
//
// Every context listens on a unix socket in the runtime directory (see
// RuntimeDir; mode 0700, checked at every Open). Importing a segment or a
// JFR of a context that is not in this process connects to its socket: the
// owner checks the token and passes the memfd of the segment (or of the
// receive ring and completion ring) over the socket, and the importer maps
// it. From then on the data path is shared memory only:
//
//   - Memory from segment.Alloc is a memfd, mapped by importers. Huge pages
//     are used when asked for and available.
//   - Memory from segment.Register (caller memory: Go heap or any mapping
//     the caller owns) cannot be mapped by another process. WRITE, READ and
//     SEND into it work through process_vm_writev/readv, which needs the
//     same user and, under Yama ptrace_scope 1, a ptrace relationship;
//     atomics on it are refused at Post with ErrNotSupported. Use Alloc
//     for memory that other processes use heavily.
//   - segment.Target.Map (DeviceAttr.MapImports) maps allocated memory
//     into the importer once more, on its own: the owner checks the
//     token again and sends the memfd, read-only for a grant without
//     WRITE, which is then mapped PROT_READ. Caller memory cannot be
//     mapped.
//   - SEND, SEND_IMM and WRITE_IMM claim a receive from the target's receive
//     ring, copy into its buffers and push the record into the target's
//     completion ring. A post list of single-buffer SENDs to one receive
//     queue is delivered several messages at a time, with one claim of
//     receives and one reservation of records for all of them, so post
//     lists are the way to a high message rate. A sender in another
//     process retries RNR on its timer (RNRTimeout) and when its JFC is
//     polled empty; one in the same process is woken when a receive
//     arrives.
//   - JFCE event mode uses an eventfd that the owner shares with importers:
//     a blocked JFCE.Wait sleeps in the kernel until a record arrives.
//
// When the peer process dies, its socket closes: requests to it (pending or
// new) complete with ACK_TIMEOUT_ERR at once, its queues go to ERROR with a
// JFS_ERR or JETTY_ERR async event (RC jetties bound to it go to ERROR even
// without traffic), and the survivor removes the socket it left behind; the
// next Open in any process sweeps sockets nobody listens on. A peer that
// closes its context says so first: requests to it then complete with
// REM_ACCESS_ABORT_ERR, as for closed objects in one process. A stopped
// (SIGSTOP) peer does not stop one-sided requests to it.
//
// Inspect lists the contexts, segments and queues live on the host; it is
// what urmactl segment ls and urmactl jetty ls show.
//
// A process killed inside the few instructions between taking a ring slot
// and publishing it (or, for a receive, while it copies a message into the
// receive buffer) leaves that slot taken. When its connection ends, the
// owner waits two seconds and repairs the slots still held, so a
// completion ring delivers again and a receive ring gets its slot back;
// until then the records behind such a slot wait. A peer that is stopped
// (SIGSTOP) rather than dead may finish its slot, so the repair waits for
// it. Known limit: a sender killed after it handed a receive back and
// before it pushed the receive's record loses that receive without a
// record.
//
// # Where things are
//
// The provider's files are its objects (context.go, segment.go, jfr.go,
// jfc.go, jfce.go, jetty.go, sendq.go), the data path (exec.go, memref.go,
// the inbox*.go and prepared*.go files), the control protocol's requests
// and the peer connections (server.go, peer.go) and the repair of what
// dead peers leave (repair.go). Below them:
//
//   - internal/shm holds the shared-memory building blocks: the sealed
//     memfd mapping and the checks a peer's memory passes before it is
//     mapped, the ring of slots every queue lives in, and the memory-order
//     primitives (release stores, store barriers, the asymmetric fence of
//     lock-free queues). What a ring's meta words and records mean is
//     this package's.
//   - internal/wire holds the control protocol's framing: message types,
//     the reading and writing of a message with its descriptors, the
//     limits and timeouts a reader holds a peer to, and the encoding of
//     payloads and replies. What a request does, and who may make it, is
//     this package's.
package loopback
