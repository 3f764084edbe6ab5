package shm

// StoreBarrier keeps the stores before it ahead of those after it. x86
// keeps ordinary stores in order already; SFENCE adds the ones it does
// not: the non-temporal stores of memmove's large copies and the stores
// of a fast string operation (REP MOVS), which Go's memmove uses on some
// Intel CPUs. Unlike a locked instruction (a full barrier), it does not
// hold the core until every earlier store reaches its cache line, which,
// for a WRITE's body, is a line the peer is reading. A call to assembly
// is also a barrier to the compiler.
//
//go:noescape
func StoreBarrier()
