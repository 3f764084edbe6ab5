// Package stress runs a mixed, self-checking RDMA workload between two
// processes: WRITEs read back and compared, SENDs and SEND_IMMs with
// checksums, and FADD/CAS chains whose every returned value is predicted,
// over several queue sets at once (RM JFS and JFR pairs, and RC Jetties
// bound to each other), half of them in event mode. It is the engine
// of the soak test and of the fault-injection tests, which kill the peer
// process at random points and check that nothing hangs, leaks or loses
// data already reported complete.
//
// Each side is a Node. Two nodes talk out of band over a pair of byte
// streams (pipes to a child process in the tests) with a line protocol:
//
//	hello <json>         the node's segment, token and JFR or Jetty descriptors
//	post <w> <slot> <seq>  a WRITE into the peer's slot is about to be posted (ledger)
//	done <w> <slot> <seq>  that WRITE completed successfully (ledger)
//	drained <json>       the node has no request in flight any more; its Stats
package stress
