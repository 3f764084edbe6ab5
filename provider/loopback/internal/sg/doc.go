// Package sg holds the loopback provider's scatter/gather lists and the
// copies between them: how a request's data moves.
//
// A [Span] is a piece of memory taken for the duration of one request:
// bytes this process maps, or a range of another process (at Raddr in
// process PID), which only process_vm_readv/writev reach. A span may hold
// one access counted in Held, which releasing its list counts out.
//
// A [List] is a scatter/gather list resolved to spans, at most [MaxSGE] of
// them. [Copy] moves the bytes of one list into another piece by piece; the
// pieces that lie in another process go through one process_vm_readv or
// process_vm_writev at the end. At most one side of a copy lies in another
// process: a copy between two other processes, or one that reaches two of
// them, fails.
//
// [Place] is Copy for a WRITE: every byte of the destination is visible
// before its last 8 bytes are stored, so that a target that polls the last
// byte of a request never reads a half-written one. A single copy does not
// promise that: memmove stores the head of some sizes after the body,
// other CPUs may see stores in another order, and process_vm_writev is a
// kernel memcpy. Hence two copies, the rest and then the tail, with a
// store barrier between them.
//
// What a span's memory is (segments, peers, their generations) and how it
// is pinned are the provider's: this package knows only the bytes, the
// other process's pid and the count of accesses to let go of. The small
// methods of Span and List, which the provider calls once or more per
// request, stay small enough to be inlined into it.
package sg
