// Package shm holds the loopback provider's shared-memory building blocks:
// memory that processes of one host share, the queue they share it
// through, and the memory-order primitives both need.
//
//   - A [Mapping] is a sealed memfd mapped shared. The owner creates it
//     ([NewMapping]) and passes its memfd to a peer process, which maps it
//     ([AttachMapping], [AttachMemory], [AttachReadOnly]) only after it
//     checked that the memfd holds what the owner declared and can never
//     shrink: a peer's memory can then not kill the process that maps it.
//   - A [Ring] is a bounded multi-producer multi-consumer queue of
//     fixed-size slots in a mapping (Vyukov's design). It holds no
//     pointers, so it works between the processes that map it. Receive
//     rings use ReserveUpTo, Publish, Claim and Release; completion rings
//     use ReserveRecord and Publish, and their consumers move the dequeue
//     position themselves (DeqPos), never writing a slot. A ring's header
//     has meta words for its owner's state, which peers see too.
//   - [StoreRelease], [StoreBarrier] and [AsymmetricFence] give the order
//     the rings and the provider's lock-free queues need at the cost each
//     architecture allows: on amd64 a release store is a plain MOV, and the
//     fence it does without is made, when needed, by the other side.
//
// The race detector does not see atomics in these mappings; in race builds
// a ring's publish and consume are also a release and an acquire on the
// Ring value, the edges the ring's atomics make.
//
// The hot paths call Seq, Payload, Meta, Publish, Release and
// ReserveRecord once or more per message: they stay small enough to be
// inlined into the provider.
package shm
