// Package provider holds the interfaces a URMA provider implements and the
// driver's forms of the values that cross the boundary between the SDK and
// a provider (identifiers, enums, work requests, completion records,
// statuses).
//
// Application code does not use this package: it uses urma, segment, jetty
// and view, which define their own types with the same values and wrap the
// interfaces in concrete types. The split follows database/sql/driver: a
// provider (loopback, ib, ...) registers a Driver in its init function and
// every provider passes the same conformance suite, provider/providertest.
// Methods that may talk to a peer (Import, ImportSegment, Advise, Bind)
// take a context and return ContextErr(ctx) once it is done.
//
// # Contract
//
// A provider must give these semantics, which the conformance suite checks:
//
//   - Every object method returns ErrClosed after Close, and Close is
//     idempotent. Context.Close closes every object created from it, children
//     first.
//   - Post validates each work request before it queues it. Requests before
//     the first invalid one are queued, the invalid one and those after it are
//     not; Post returns how many were queued and an error for the first one
//     that was not. A full send queue gives ErrAgain for that request.
//   - A queue slot of a signaled request is freed when its completion record
//     is polled; an unsignaled request's slot is freed when the record of a
//     later signaled request of the same queue is polled, as on verbs.
//   - Failures the remote side or the data path would find (out-of-bounds or
//     wrong-permission remote access, a closed remote segment, no posted
//     receive, a receive buffer too small) are completion records with an
//     error status, never panics, and no byte outside the allowed range is
//     touched. A failed request moves its queue to StateError and raises an
//     async event; Flush then returns WR_FLUSH_ERR records for every request
//     still queued.
//   - Objects that raised an async event cannot be closed (ErrBusy) until the
//     event is acknowledged.
package provider
