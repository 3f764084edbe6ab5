// Package ib is the URMA provider over rdma-core verbs: InfiniBand, RoCE
// and iWARP devices, including the kernel's software devices Soft-RoCE
// (rxe) and soft-iWARP (siw). Import it for its side effect:
//
//	import _ "github.com/urma-go/sdk/provider/ib"
//
// The same application code runs on it and on the loopback provider; only
// the device name differs.
//
// # Building
//
// The verbs code needs cgo, the rdma-core headers and libraries, and the
// build tag urma_verbs:
//
//	go build -tags urma_verbs ./...
//
//	Debian, Ubuntu:      apt-get install libibverbs-dev librdmacm-dev
//	                     (at run time: libibverbs1 librdmacm1 ibverbs-providers)
//	RHEL, Fedora, Rocky: dnf install rdma-core-devel
//	                     (at run time: libibverbs librdmacm)
//
// The tag is opt-in so that the module, its examples and urmactl build on
// any machine, with or without cgo and the headers. Without the tag (or
// with CGO_ENABLED=0, or on another OS) the driver is still registered and
// reports ErrNotSupported saying how to build it; urma.Devices skips it.
// Every `import "C"` is in provider/ib/internal/verbs.
//
// # How URMA maps onto verbs
//
//   - Device: a verbs device. Its EIDs are its GID table, one entry per
//     address: a RoCE GID is an IP address already; for InfiniBand and
//     iWARP the EIDs are the addresses of the GID's network interface
//     (IPoIB, or the iWARP netdev). IPv6 link-local EIDs come last.
//   - Context: the device (librdmacm's verbs context) with one protection
//     domain, and an rdma_cm listener on the EID's address. The UASID is
//     the listener's port, so descriptors say where to connect.
//   - Segment: ibv_reg_mr over memfd memory (Alloc; huge pages when asked)
//     or pinned caller memory (Register). Import asks the owner, in the
//     private data of an rdma_cm connect request, to check the descriptor
//     and token; the owner answers in the reject's private data with the
//     rkey. A peer without the token never learns the key, and an import
//     of a LOCAL_ONLY segment is refused (ErrPermission).
//   - JFC: a CQ; JFCE: a completion channel plus an eventfd for the
//     records the provider makes itself; JFR: an SRQ.
//   - JFS and Jetty in RM mode: one RC QP per remote JFR or Jetty,
//     connected by Advise or by the first request to it (which then waits
//     for the connection). The receiving context accepts in its own
//     goroutine, attaching a QP to the JFR's SRQ; the application takes no
//     part. RC Jetty: one QP, made by the first of the two sides to Bind.
//   - Jetty group: a table of the context's. An import of one is answered
//     like a Jetty's, with the group's policy and member ids after the
//     reply (27 fit a reject's private data: MaxJettiesInGroup); the
//     importer then reaches each member as an imported Jetty, and each
//     request to the group goes to the member provider.PickMember gives.
//   - UM: UD. A UM JFR has a UD QP on its SRQ, with a random qkey; every
//     receive it posts starts with a 40-byte SGE of the provider's for the
//     routing header the device puts in front of a datagram. A UM JFS has
//     one UD QP and an address handle per remote. Before its first
//     datagram to a remote it introduces its QP in a connect request
//     (checked like an import: only a sender with the token learns the
//     QP number and qkey); a receive record then names its sender from
//     the header's source GID and the source QP. A datagram is one
//     packet: Attr().MaxUMMsgSize is the port MTU, and Post refuses a
//     longer one. A UM NOP is a record of the provider's own, delivered
//     after the records of the requests before it. iWARP has no UD, so UM
//     is not in its Modes.
//   - Opcodes: WRITE, WRITE_IMM, READ, SEND, SEND_IMM, and CAS and FADD
//     where the device has atomics. SWAP, FSUB, FAND, FOR and FXOR have no
//     verbs opcode and are refused with ErrNotSupported. NOP is a
//     zero-length WRITE (a zero-length READ on iWARP) behind the queue's
//     last request, or a record of the provider's own when nothing is
//     outstanding. Immediate data is 32 bits. WRITE_NOTIFY is the data's
//     WRITE and an 8-byte WRITE of the notify data on the same
//     connection, under one wr_id and one record; it takes two send
//     queue entries of the queue's depth. SEND_INVALIDATE is refused
//     with ErrNotSupported (DeviceAttr.SendInvalidate is false): verbs'
//     SEND_WITH_INV invalidates memory windows and fast-registered keys,
//     not the MRs that segments are.
//
// # What differs between devices
//
// The device attributes say it, and the conformance suite follows them:
// ImmData, RNR and RemoteStatus are false on iWARP (no immediate data; a
// SEND that finds no receive tears the connection down; a responder's
// refusal always reads REM_ACCESS_ABORT_ERR), MaxReadSGE is the device's
// max_sge_rd (1 on siw), UM is missing from Modes on iWARP, MaxUMMsgSize
// is the port MTU, SolicitedEvents is false on siw (it never marks a
// receive solicited, so Rearm(true) arms for every record), and
// SolicitedInCR is false everywhere (ibv_wc has no such bit).
//
// MapImports is false everywhere: verbs reach remote memory only through
// requests, so segment.Target.Map fails with ErrNotSupported.
//
// Queue knobs: RxThreshold is the SRQ limit (ibv_modify_srq), so a JFR,
// or a Jetty with its own receive queue, raises JFR_LIMIT or JETTY_LIMIT
// from IBV_EVENT_SRQ_LIMIT_REACHED; OrderCap is OL and NO, what an RC
// connection gives; ErrTimeout is the ACK timeout rdma_cm gives a queue's
// connections (RDMA_OPTION_ID_ACK_TIMEOUT), false on iWARP, whose TCP
// keeps its own; ErrorSuspend is false (verbs queues only go to ERROR).
//
// iWARP completes a WRITE or SEND as soon as TCP has it and reports a
// responder's refusal only by terminating the connection. The provider
// therefore posts a zero-length READ behind every signaled WRITE and SEND
// on iWARP and completes the request when the READ returns: a completion
// means the data was placed, as on InfiniBand, at the cost of a round
// trip per signaled request. Unsignaled requests are not slowed.
//
// RM requests to different remotes run on different QPs, concurrently;
// their records are still delivered in posting order. A failed request's
// record is delivered at once, and the queue stops there.
//
// # Memory limits
//
// Registered memory, queues and CQs are pinned and count against
// RLIMIT_MEMLOCK. When a verbs call fails with ENOMEM the error says the
// limit and how to raise it (ulimit -l, LimitMEMLOCK= in systemd).
//
// # Busy polling and Go's preemption
//
// Go preempts a goroutine that runs for 10 ms, and Go's sysmon thread
// takes the processor (P) of one it finds inside a long cgo call; a
// goroutine spinning on JFC.Poll or on memory is such a goroutine. Each
// take sets sysmon polling at its shortest interval, stealing CPU from the
// peer and from the kernel's rxe workers. A spin loop should therefore
// yield to the scheduler by the clock, every few milliseconds, not every N
// turns: N turns are a short time on hardware and a long one under
// emulation, and a Gosched wakes a second thread each time. JFC.PollWait
// does this (once per spin.Yield) and also lets a JFC with a JFCE spin for
// a budget and then sleep. A turn of PostAfter's or PostWhen's wait is
// itself a spin in C, so spin.Pacer reads the clock more often when turns
// are slow: a pacer that counted a fixed number of such turns between
// reads would yield too late for sysmon. bench/ib-perftest compares these
// loops with perftest's.
//
// Soft-RoCE does a user QP's work in a kernel worker, woken by a post
// unless it is still busy with the QP. A post that follows the previous
// completion at once finds it busy; one that takes two cgo crossings, as
// any Go loop does, may find it asleep and wake it, which is costly under
// emulation. That, not the SDK's code, is where most of the gap to
// perftest's small-message latency on rxe comes from. A NIC has no such
// worker.
//
// jetty.Prepared.PostAfter closes the gap where a request waits for a
// record: a prepared request implements provider.PollPoster, and its poll
// is one C call that polls the CQ for up to 20 us and posts the request
// right after completions that all succeeded, before Go sees them. The
// queue's lock is held meanwhile (a post on the same queue from another
// goroutine waits up to that long); a request that would not reach the
// device, or a failed completion, leaves the post to Go after the
// records, as Post would do it. At full depth the post may take the slot
// of the oldest request, if the poll returns that request's completion.
// urmactl perf's READ, atomic and SEND latency loops post this way.
//
// jetty.Prepared.PostWhen does the same where a request waits for a byte
// of memory, a peer's WRITE: the prepared request implements
// provider.FlagPoster, one C call that watches the byte for up to 20 us
// and posts the request the moment it holds the value, under the queue's
// lock as above. urmactl perf's WRITE latency loops post this way.
//
// GODEBUG=asyncpreemptoff=1 turns off the preemption signal. It has a
// condition: every spin loop must reach a point where the scheduler can
// stop it. A loop on JFC.Poll does (each poll is a cgo call); a loop that
// only reads memory does not, and then the collector's stop-the-world
// waits for it forever, unless it yields as above. bench/ib-perftest
// measures both settings next to perftest.
//
// # Views and signature offload
//
// view.View runs in software on every device, through a registered
// bounce segment (DeviceAttr.Views is ViewSoftware). At open the provider
// asks mlx5 devices for CRC signature offload (mlx5dv_query_device with
// MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD) and reports it in
// DeviceAttr.SigOffload. The rest of the offload is built into the
// provider but not used: an RC QP with MLX5DV_QP_EX_WITH_MKEY_CONFIGURE,
// an indirect signature memory key, its configuration (access,
// interleaved layout, CRC domains with seed 0xFFFFFFFF),
// mlx5dv_mkey_check and local invalidate. It is compiled and linked in
// CI, and the VM tests check that libmlx5 refuses the constructors on rxe
// and siw with an errno; nothing else of it can run without an mlx5
// device, so views do not use it yet. Wiring it means: a view asks the
// context for a key when SigOffload is set, configures it on a
// self-connected signature QP, posts requests with the key's lkey (remote
// peers import its rkey), turns mlx5dv_mkey_check after each completion
// into CRSignatureErr, and invalidates on Configure and Close. Until it
// can be tested on hardware, an honest software path beats an untested
// hardware one.
//
// # Plain rdma_cm peers
//
// The context also implements provider.RDMACM, which package rdmacm wraps:
// a Jetty connected to a program that speaks librdmacm and verbs only
// (rping). DialRDMACM and a listener's Accept make an ordinary RC
// connection with no private data (READ/atomic depths clamped to the
// peer's with RDMA_MAX_INIT_DEPTH/RDMA_MAX_RESP_RES) and hand its id to the
// context's rdma_cm goroutine, as for URMA peers. The peer is a remote
// marked foreign, named by its address and port; its connection is never
// remade, so requests after a disconnect complete with
// REM_ACCESS_ABORT_ERR. The listener has its own event channel and waits
// for ESTABLISHED before Accept returns, so that the Jetty may send at
// once on iWARP too. SegmentKey is the MR's rkey; ImportKey trusts the
// peer's rkey, which the device checks on use.
package ib
