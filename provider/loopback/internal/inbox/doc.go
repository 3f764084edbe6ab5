// Package inbox holds the shared-memory format of the loopback provider's
// inboxes and the operations on it, the first step of receiver-side SEND
// delivery (see docs/architecture.md). An inbox is where senders, in any
// process, leave small messages for a receive queue to deliver itself.
//
// An [Inbox] is a JFC-style ring (consumers never write the cells,
// producers learn of free cells from deq) of 32-byte cells, so that a cell
// line carries two messages and only moves from the sender's core to the
// receiver's: a sender touches no line the receiver writes on every
// message, and reads deq only when its last reading says the inbox is
// full.
//
// A message is an entry of 1 to [MaxCells] consecutive cells. Each cell
// starts with its sequence word, as every ring slot does, so that a cell
// left from the ring's previous lap can never pass for a published one;
// the further cells of an entry are published with [Cont] set, so that
// one whose first cell was lost (its producer died) is skipped, not read
// as a message. The first cell holds the message's [Header], its
// immediate data and its first [HeadData] bytes; each next cell
// [CellData] more bytes.
//
// The mapping of an inbox is its ring, then the route table of the
// receive queue that owns it, so that a sender in another process maps
// both with one descriptor. A [Route] is a sending queue's entry in that
// table: it names the sender in the receive records ([Sender]) and tells
// the sender how delivery went.
//
// The ring's meta words hold the consumer lock (0, or the pid of the
// process that delivers the messages now: the receiver, or a sender
// helping a receiver that stands still) and a count of the receiver's
// signs of life, which senders read to tell whether it stands still.
//
// What owns an inbox, which queues hold its routes and how a message is
// delivered are the provider's: this package knows no queue. What the
// provider calls once or more per message (Head, Consume, Waiting,
// TryLock, Bump, Held and the route's Skips and Fail) stays small enough
// to be inlined into it.
package inbox
