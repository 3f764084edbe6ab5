// Package jetty holds URMA's queues and the data path: JFCE (completion
// event channel), JFC (completion queue), JFS (send queue), JFR (receive
// queue), Jetty (a send queue with a receive queue), imported remote JFRs and
// Jetties, work requests and completion records.
//
// Requests are posted in batches with Post and PostRecv; completions are
// polled into a caller slice with JFC.Poll, or waited for in event mode with
// JFC.Rearm and JFCE.Wait. Write, Read, Send, CAS and the other methods named
// after an operation are helpers that post one signaled request: URMA itself
// has atomics only as opcodes of a posted request.
//
// Transport modes follow URMA: RM lets one JFS reach many imported JFRs, RC
// binds a Jetty to exactly one remote Jetty with Bind, and UM sends messages
// only (one-sided requests are refused at Post).
package jetty
