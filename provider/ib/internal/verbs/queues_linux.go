//go:build linux && cgo && urma_verbs

package verbs

/*
#cgo nocallback uv_req_notify_cq
#cgo noescape uv_flag_post
#cgo nocallback uv_flag_post
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// createMu serialises the creation of queues. See the note at its use.
var createMu sync.Mutex

// SGE, SendWR, RecvWR and WC are the flat C forms of the data path; the
// provider keeps arrays of them and fills them in place.
type (
	SGE    C.struct_uv_sge
	SendWR C.struct_uv_send_wr
	RecvWR C.struct_uv_recv_wr
	WC     C.struct_uv_wc
)

// Send opcodes (enum ibv_wr_opcode).
const (
	WRWrite    = C.IBV_WR_RDMA_WRITE
	WRWriteImm = C.IBV_WR_RDMA_WRITE_WITH_IMM
	WRSend     = C.IBV_WR_SEND
	WRSendImm  = C.IBV_WR_SEND_WITH_IMM
	WRRead     = C.IBV_WR_RDMA_READ
	WRCAS      = C.IBV_WR_ATOMIC_CMP_AND_SWP
	WRFAdd     = C.IBV_WR_ATOMIC_FETCH_AND_ADD
)

// Send flags.
const (
	SendFence     = C.IBV_SEND_FENCE
	SendSignaled  = C.IBV_SEND_SIGNALED
	SendSolicited = C.IBV_SEND_SOLICITED
	SendInline    = C.IBV_SEND_INLINE
)

// Completion opcodes and flags.
const (
	WCSend        = C.IBV_WC_SEND
	WCWrite       = C.IBV_WC_RDMA_WRITE
	WCRead        = C.IBV_WC_RDMA_READ
	WCCAS         = C.IBV_WC_COMP_SWAP
	WCFAdd        = C.IBV_WC_FETCH_ADD
	WCRecv        = C.IBV_WC_RECV
	WCRecvImm     = C.IBV_WC_RECV_RDMA_WITH_IMM
	WCWithImm     = C.IBV_WC_WITH_IMM
	WCSuccess     = C.IBV_WC_SUCCESS
	WCFlushErr    = C.IBV_WC_WR_FLUSH_ERR
	WCLocLenErr   = C.IBV_WC_LOC_LEN_ERR
	WCLocQPOpErr  = C.IBV_WC_LOC_QP_OP_ERR
	WCLocProtErr  = C.IBV_WC_LOC_PROT_ERR
	WCMWBindErr   = C.IBV_WC_MW_BIND_ERR
	WCBadRespErr  = C.IBV_WC_BAD_RESP_ERR
	WCLocAccErr   = C.IBV_WC_LOC_ACCESS_ERR
	WCRemInvReq   = C.IBV_WC_REM_INV_REQ_ERR
	WCRemAccErr   = C.IBV_WC_REM_ACCESS_ERR
	WCRemOpErr    = C.IBV_WC_REM_OP_ERR
	WCRetryExc    = C.IBV_WC_RETRY_EXC_ERR
	WCRNRRetryExc = C.IBV_WC_RNR_RETRY_EXC_ERR
	WCRemAbortErr = C.IBV_WC_REM_ABORT_ERR
	WCFatalErr    = C.IBV_WC_FATAL_ERR
	WCRespTimeout = C.IBV_WC_RESP_TIMEOUT_ERR
	WCGeneralErr  = C.IBV_WC_GENERAL_ERR
)

// WCStatusName is ibv_wc_status_str.
func WCStatusName(s uint32) string { return C.GoString(C.ibv_wc_status_str(s)) }

// Fields of WC for the provider, which cannot name C fields outside this
// package.

// ID is the request's wr_id.
func (w *WC) ID() uint64 { return uint64(w.wr_id) }

// Status is the completion status.
func (w *WC) Status() uint32 { return uint32(w.status) }

// Opcode is the completion opcode.
func (w *WC) Opcode() uint32 { return uint32(w.opcode) }

// Len is byte_len.
func (w *WC) Len() uint32 { return uint32(w.byte_len) }

// Imm is the immediate data in host order, zero without one.
func (w *WC) Imm() uint32 { return uint32(w.imm) }

// QPNum is the local QP number.
func (w *WC) QPNum() uint32 { return uint32(w.qp_num) }

// Flags is wc_flags.
func (w *WC) Flags() uint32 { return uint32(w.wc_flags) }

// VendorErr is the device's own error code.
func (w *WC) VendorErr() uint32 { return uint32(w.vendor_err) }

// Set fills one scatter/gather element.
func (s *SGE) Set(addr uint64, length, lkey uint32) {
	s.addr, s.length, s.lkey = C.uint64_t(addr), C.uint32_t(length), C.uint32_t(lkey)
}

// Set fills a send request. Its SGEs are sges[sgeOff:sgeOff+numSGE].
func (w *SendWR) Set(id uint64, opcode, flags uint8, sgeOff, numSGE int) {
	*w = SendWR{}
	w.wr_id, w.opcode, w.flags = C.uint64_t(id), C.uint8_t(opcode), C.uint8_t(flags)
	w.sge_off, w.num_sge = C.uint32_t(sgeOff), C.uint32_t(numSGE)
}

// SetRemote sets the remote address and key of a one-sided request.
func (w *SendWR) SetRemote(addr uint64, rkey uint32) {
	w.remote_addr, w.rkey = C.uint64_t(addr), C.uint32_t(rkey)
}

// SetAtomic sets the operands of CAS (compare, swap) or FADD (add, 0).
func (w *SendWR) SetAtomic(compareAdd, swap uint64) {
	w.compare_add, w.swap = C.uint64_t(compareAdd), C.uint64_t(swap)
}

// SetImm sets the immediate data, in host order.
func (w *SendWR) SetImm(imm uint32) { w.imm = C.uint32_t(imm) }

// Set fills a receive request.
func (w *RecvWR) Set(id uint64, sgeOff, numSGE int) {
	w.wr_id, w.sge_off, w.num_sge = C.uint64_t(id), C.uint32_t(sgeOff), C.uint32_t(numSGE)
}

// CompChannel is a completion event channel.
type CompChannel struct{ ch *C.struct_ibv_comp_channel }

// NewCompChannel creates a channel; its fd is made non-blocking.
func (c *Context) NewCompChannel() (*CompChannel, error) {
	ch, err := C.ibv_create_comp_channel(c.c)
	if ch == nil {
		return nil, fmt.Errorf("ibv_create_comp_channel: %w", err)
	}
	if err := syscall.SetNonblock(int(C.uv_comp_channel_fd(ch)), true); err != nil {
		C.ibv_destroy_comp_channel(ch)
		return nil, err
	}
	return &CompChannel{ch: ch}, nil
}

// FD is the channel's descriptor, readable when an event is pending.
func (ch *CompChannel) FD() int { return int(C.uv_comp_channel_fd(ch.ch)) }

// GetEvent returns the Context value of the CQ with an event; ok is false
// when none is pending.
func (ch *CompChannel) GetEvent() (cqContext uintptr, ok bool, err error) {
	var v C.uint64_t
	rc := C.uv_get_cq_event(ch.ch, &v)
	if rc < 0 {
		return 0, false, fmt.Errorf("ibv_get_cq_event: %w", errnoOf(rc))
	}
	return uintptr(v), rc == 1, nil
}

// Destroy destroys the channel; its CQs must be gone.
func (ch *CompChannel) Destroy() error {
	if rc := C.ibv_destroy_comp_channel(ch.ch); rc != 0 {
		return fmt.Errorf("ibv_destroy_comp_channel: %w", syscall.Errno(rc))
	}
	return nil
}

// CQ is a completion queue.
type CQ struct {
	cq  *C.struct_ibv_cq
	Cap int
}

// NewCQ creates a CQ of at least depth entries. ctxValue comes back from
// CompChannel.GetEvent and in CQ_ERR async events; it must not be a Go
// pointer.
func (c *Context) NewCQ(depth int, ch *CompChannel, ctxValue uintptr) (*CQ, error) {
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.ch
	}
	var capacity, cerr C.int
	createMu.Lock()
	cq := C.uv_create_cq(c.c, C.int(depth), C.uint64_t(ctxValue), cch, &capacity, &cerr)
	createMu.Unlock()
	if cq == nil {
		return nil, syscall.Errno(cerr)
	}
	return &CQ{cq: cq, Cap: int(capacity)}, nil
}

// Poll moves up to len(out) completions into out.
func (q *CQ) Poll(out []WC) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	n := pollCQAt(uintptr(unsafe.Pointer(q.cq)), len(out), uintptr(unsafe.Pointer(&out[0])))
	if n < 0 {
		return 0, fmt.Errorf("ibv_poll_cq: %w", errnoOf(C.int(n)))
	}
	return int(n), nil
}

// PollPost polls the CQ for up to spin for completions into out and,
// when it took some and every one succeeded, posts wrs (whose SGEs index
// sges) on qp in the same call, right after the completions; with need,
// only when the completion with ID needID is among them. It returns how
// many completions it took, whether it tried the post, and how many
// requests were posted; err is the poll's or the post's error.
func (q *CQ) PollPost(out []WC, spin time.Duration, need bool, needID uint64, qp *QP, wrs []SendWR, sges []SGE) (n int, tried bool, posted int, err error) {
	if len(out) == 0 || len(wrs) == 0 {
		return 0, false, 0, nil
	}
	var bad, tr, rc C.int
	got := C.uv_poll_post(q.cq, C.int(len(out)), (*C.struct_uv_wc)(&out[0]), C.int64_t(spin),
		qp.qp, (*C.struct_uv_send_wr)(&wrs[0]), C.int(len(wrs)), sgeList(sges),
		C.int(b2i(need)), C.uint64_t(needID), &bad, &tr, &rc)
	if got < 0 {
		return 0, false, 0, fmt.Errorf("ibv_poll_cq: %w", errnoOf(got))
	}
	tried, posted, err = fusedPost(tr, rc, bad, len(wrs))
	return int(got), tried, posted, err
}

// FlagPost watches *flag for up to spin and, once it holds want, posts
// wrs (whose SGEs index sges) on qp in the same call. It returns whether
// it tried the post and, as PostSend, how many requests were posted and
// the post's error.
func (qp *QP) FlagPost(flag *byte, want byte, spin time.Duration, wrs []SendWR, sges []SGE) (tried bool, posted int, err error) {
	if len(wrs) == 0 {
		return false, 0, nil
	}
	var bad, tr, rc C.int
	C.uv_flag_post((*C.uint8_t)(unsafe.Pointer(flag)), C.uint8_t(want), C.int64_t(spin),
		qp.qp, (*C.struct_uv_send_wr)(&wrs[0]), C.int(len(wrs)), sgeList(sges), &bad, &tr, &rc)
	return fusedPost(tr, rc, bad, len(wrs))
}

// fusedPost reads a fused call's outcome: whether it tried the post (tr)
// and, as PostSend returns them, how many of n requests were posted and
// the post's error.
func fusedPost(tr, rc, bad C.int, n int) (bool, int, error) {
	switch {
	case tr == 0:
		return false, 0, nil
	case rc != 0:
		return true, int(bad), errnoOf(rc) // some providers return -errno
	}
	return true, n, nil
}

// sgeList is sges for C: the SGE table that work requests index.
func sgeList(sges []SGE) *C.struct_uv_sge {
	if len(sges) == 0 {
		return nil
	}
	return (*C.struct_uv_sge)(&sges[0])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ReqNotify arms the CQ for one event on its channel.
func (q *CQ) ReqNotify(solicitedOnly bool) error {
	s := C.int(0)
	if solicitedOnly {
		s = 1
	}
	if rc := C.uv_req_notify_cq(q.cq, s); rc != 0 {
		return fmt.Errorf("ibv_req_notify_cq: %w", syscall.Errno(rc))
	}
	return nil
}

// Ack acknowledges n events of this CQ.
func (q *CQ) Ack(n int) { C.ibv_ack_cq_events(q.cq, C.uint(n)) }

// Destroy destroys the CQ; its QPs must be gone and its events acked.
func (q *CQ) Destroy() error {
	if rc := C.ibv_destroy_cq(q.cq); rc != 0 {
		return fmt.Errorf("ibv_destroy_cq: %w", syscall.Errno(rc))
	}
	return nil
}

// SRQ is a shared receive queue.
type SRQ struct {
	srq    *C.struct_ibv_srq
	MaxWR  int
	MaxSGE int
}

// NewSRQ creates an SRQ. ctxValue comes back in SRQ async events.
func (c *Context) NewSRQ(maxWR, maxSGE int, ctxValue uintptr) (*SRQ, error) {
	var gotWR, gotSGE C.uint32_t
	var cerr C.int
	createMu.Lock()
	srq := C.uv_create_srq(c.pd, C.uint32_t(maxWR), C.uint32_t(maxSGE), C.uint64_t(ctxValue), &gotWR, &gotSGE, &cerr)
	createMu.Unlock()
	if srq == nil {
		return nil, syscall.Errno(cerr)
	}
	return &SRQ{srq: srq, MaxWR: int(gotWR), MaxSGE: int(gotSGE)}, nil
}

// PostRecv posts wrs (whose SGEs index sges) and returns how many were
// posted before an error.
func (s *SRQ) PostRecv(wrs []RecvWR, sges []SGE) (int, error) {
	if len(wrs) == 0 {
		return 0, nil
	}
	if rc, bad := postSRQRecvAt(uintptr(unsafe.Pointer(s.srq)), uintptr(unsafe.Pointer(&wrs[0])), len(wrs), uintptr(unsafe.Pointer(sgeList(sges)))); rc != 0 {
		return bad, errnoOf(C.int(rc)) // some providers return -errno
	}
	return len(wrs), nil
}

// Destroy destroys the SRQ; its QPs must be gone.
func (s *SRQ) Destroy() error {
	if rc := C.ibv_destroy_srq(s.srq); rc != 0 {
		return fmt.Errorf("ibv_destroy_srq: %w", syscall.Errno(rc))
	}
	return nil
}

// QP is an RC queue pair, created through rdma_cm.
type QP struct {
	qp  *C.struct_ibv_qp
	Num uint32
}

// PostSend posts wrs (whose SGEs index sges) and returns how many were
// posted before an error.
func (q *QP) PostSend(wrs []SendWR, sges []SGE) (int, error) {
	if len(wrs) == 0 {
		return 0, nil
	}
	if rc, bad := postSendAt(uintptr(unsafe.Pointer(q.qp)), uintptr(unsafe.Pointer(&wrs[0])), len(wrs), uintptr(unsafe.Pointer(sgeList(sges)))); rc != 0 {
		return bad, errnoOf(C.int(rc)) // some providers return -errno
	}
	return len(wrs), nil
}

// ToError moves the QP to the error state, flushing its requests.
func (q *QP) ToError() error {
	if rc := C.uv_qp_to_error(q.qp); rc != 0 {
		return fmt.Errorf("modify qp %d to ERR: %w", q.Num, syscall.Errno(rc))
	}
	return nil
}

// SetRNRTimer sets the RNR NAK timer (the IB encoding) this QP announces
// as responder.
func (q *QP) SetRNRTimer(code uint8) error {
	if rc := C.uv_qp_set_rnr_timer(q.qp, C.uint8_t(code)); rc != 0 {
		return fmt.Errorf("modify qp %d min_rnr_timer: %w", q.Num, syscall.Errno(rc))
	}
	return nil
}

// ID is the receive request's wr_id.
func (w *RecvWR) ID() uint64 { return uint64(w.wr_id) }

// ID is the send request's wr_id.
func (w *SendWR) ID() uint64 { return uint64(w.wr_id) }
