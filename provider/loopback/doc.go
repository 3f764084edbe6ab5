// Package loopback is the software URMA provider: no hardware, no cgo.
//
// Importing it for its side effect registers the provider "loopback" with
// one device, "loopback0", whose EID table holds ::ffff:127.0.0.1 to
// ::ffff:127.0.0.4. Contexts opened on it reach each other through an
// in-process fabric: one-sided requests (WRITE, READ, atomics) run in the
// initiator's goroutine directly on the target's memory, so the target takes
// no part, and atomics are real CPU atomics on that memory.
//
// The memory layout is already the one a cross-process version needs:
// segments allocated by Alloc live in memfd mappings, and completion and
// receive queues are rings in mmap'd memory that hold only plain integers
// (offsets, handles, sequence numbers), never Go pointers.
package loopback
