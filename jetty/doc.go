// Package jetty holds URMA's queues and the data path: JFCE (completion
// event channel), JFC (completion queue), JFS (send queue), JFR (receive
// queue), Jetty (a send queue with a receive queue), imported remote JFRs and
// Jetties, work requests and completion records.
//
// Requests are posted in batches with Post and PostRecv; completions are
// polled into a caller slice with JFC.Poll, or waited for in event mode with
// JFC.Rearm and JFCE.Wait. Write, Read, Send, FetchAdd, CompareSwap and the
// other methods named after an operation are helpers that post one signaled
// request: URMA itself has atomics only as opcodes of a posted request. They
// take the peer's side first: its imported JFR or Jetty (which one-sided
// requests name too), the remote range, then the local one. A Caller posts an
// atomic and waits for its old value; a RecvPool keeps a receive queue fed.
//
// Transport modes follow URMA: RM lets one JFS reach many imported JFRs, RC
// binds a Jetty to exactly one remote Jetty with Bind, and UM sends messages
// only (one-sided requests are refused at Post).
//
// A JettyGroup gathers RM Jetties that peers import as one target with
// ImportJetty; each request to it goes to one member, in turn or by the
// request's Hint, so that a server spreads its load over Jetties polled by
// goroutines of their own.
//
// A local SGE may name a view.View: a layout of registered memory with
// optional block signatures. Post then runs the request through the view's
// software path (its data is gathered, signed or checked into a bounce
// segment first when the view is the source), and the JFC that receives the
// record finishes it (checking and scattering the data when the view is the
// destination) before Poll or Flush returns the record, with status
// CRSignatureErr if a check failed. Such a request carries a token of its
// JFC underneath instead of the caller's user context, which Poll puts
// back, and is signaled underneath; the record of an unsignaled one that
// succeeded is dropped. Atomics do not run through views, and a view is
// never the remote side: peers import View.Expose's descriptor.
package jetty
