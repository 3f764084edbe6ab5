//go:build linux && cgo && urma_verbs

package verbs

/*
#cgo nocallback uv_poll_cq_at
#cgo nocallback uv_post_send_at
#cgo nocallback uv_post_srq_recv_at
#include "shim.h"
*/
import "C"

// The data path's calls into C pass their pointers as addresses (see the
// _at functions in shim.h), which spares each call cgo's check of every
// pointer argument. An address is only good while what it points to stays
// where it is: go:uintptrescapes makes the compiler keep the memory behind
// each pointer converted to uintptr in a call of these functions on the
// heap, which does not move, and alive until the call returns; the
// conversion must be written in the call's argument list for that. A slice
// that would have lived on its caller's stack, which moves when it grows,
// goes to the heap instead. The provider's request and completion arrays
// are there already.

//go:uintptrescapes
func pollCQAt(cq uintptr, n int, out uintptr) int {
	return int(C.uv_poll_cq_at(C.uintptr_t(cq), C.int(n), C.uintptr_t(out)))
}

//go:uintptrescapes
func postSendAt(qp, wrs uintptr, n int, sges uintptr) (rc, bad int) {
	return unpackPost(int64(C.uv_post_send_at(C.uintptr_t(qp), C.uintptr_t(wrs), C.int(n), C.uintptr_t(sges))))
}

//go:uintptrescapes
func postSRQRecvAt(srq, wrs uintptr, n int, sges uintptr) (rc, bad int) {
	return unpackPost(int64(C.uv_post_srq_recv_at(C.uintptr_t(srq), C.uintptr_t(wrs), C.int(n), C.uintptr_t(sges))))
}

// unpackPost splits uv_post_result's value into the post's result (0 or
// an errno, which some providers return negated) and the index of the
// first request not posted.
func unpackPost(v int64) (rc, bad int) {
	return int(int32(uint32(v))), int(int32(uint32(v >> 32)))
}
