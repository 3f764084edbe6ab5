//go:build linux && cgo && urma_verbs

package verbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// GRHSize is the room a UD receive needs in front of the message: the
// device writes the datagram's global routing header (or, for RoCE v2
// over IPv4, the IPv4 header in its last 20 bytes) there.
const GRHSize = 40

// NewUDQP creates a UD QP in RTS on port with qkey. Its receives come from
// srq when srq is not nil. Destroy it with Destroy.
func (c *Context) NewUDQP(scq, rcq *CQ, srq *SRQ, caps QPCaps, port int, qkey uint32) (*QP, error) {
	var s *C.struct_ibv_srq
	if srq != nil {
		s = srq.srq
	}
	var cerr C.int
	createMu.Lock()
	qp := C.uv_create_ud_qp(c.pd, scq.cq, rcq.cq, s, C.uint32_t(caps.MaxSendWR), C.uint32_t(caps.MaxSendSGE),
		C.uint32_t(caps.MaxInline), C.uint8_t(port), C.uint32_t(qkey), &cerr)
	createMu.Unlock()
	if qp == nil {
		return nil, fmt.Errorf("create UD QP: %w", syscall.Errno(cerr))
	}
	return &QP{qp: qp, Num: uint32(C.uv_qp_num(qp))}, nil
}

// Destroy destroys a QP made by NewUDQP (rdma_cm QPs go with
// CMID.DestroyQP).
func (q *QP) Destroy() error {
	if rc := C.ibv_destroy_qp(q.qp); rc != 0 {
		return fmt.Errorf("ibv_destroy_qp %d: %w", q.Num, syscall.Errno(rc))
	}
	return nil
}

// AH is an address handle: the route of UD sends to one port.
type AH struct{ ah *C.struct_ibv_ah }

// NewAH makes an address handle to the port with GID dgid, leaving from
// the local GID at sgidIndex of port.
func (c *Context) NewAH(port int, dgid [16]byte, sgidIndex int) (*AH, error) {
	var cerr C.int
	ah := C.uv_create_ah(c.pd, C.uint8_t(port), (*C.uint8_t)(unsafe.Pointer(&dgid[0])), C.uint8_t(sgidIndex), &cerr)
	if ah == nil {
		return nil, fmt.Errorf("ibv_create_ah: %w", syscall.Errno(cerr))
	}
	return &AH{ah: ah}, nil
}

// Destroy destroys the address handle; no posted send may still use it.
func (a *AH) Destroy() error {
	if rc := C.ibv_destroy_ah(a.ah); rc != 0 {
		return fmt.Errorf("ibv_destroy_ah: %w", syscall.Errno(rc))
	}
	return nil
}

// SetUD addresses a send on a UD QP.
func (w *SendWR) SetUD(ah *AH, qpn, qkey uint32) {
	w.ah, w.remote_qpn, w.remote_qkey = C.uint64_t(uintptr(unsafe.Pointer(ah.ah))), C.uint32_t(qpn), C.uint32_t(qkey)
}

// SrcQP is the sender's QP number of a UD receive.
func (w *WC) SrcQP() uint32 { return uint32(w.src_qp) }

// GRHSource returns the sender's GID from the header a UD receive placed
// in front of the message: the IPv6 or InfiniBand source GID, or for an
// IPv4 datagram (RoCE v2) its source address in the ::ffff: form.
func GRHSource(grh []byte) (gid [16]byte, ok bool) {
	if len(grh) < GRHSize {
		return gid, false
	}
	switch {
	case grh[0]>>4 == 6: // IPv6 header or InfiniBand GRH
		copy(gid[:], grh[8:24])
		return gid, true
	case grh[20]>>4 == 4: // 20 unused bytes, then the IPv4 header
		gid[10], gid[11] = 0xff, 0xff
		copy(gid[12:], grh[32:36])
		return gid, true
	}
	return gid, false
}
