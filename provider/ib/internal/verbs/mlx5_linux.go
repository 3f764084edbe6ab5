//go:build linux && cgo && urma_verbs

package verbs

/*
#cgo LDFLAGS: -lmlx5
#include <stdlib.h>
#include "shim.h"
#include "mlx5.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// SigCaps is what a device reports about block signature offload.
type SigCaps struct {
	// Mlx5 is set for devices driven by mlx5 (ConnectX and later).
	Mlx5 bool
	// Offload is set when the device computes CRC32 or CRC32C block
	// signatures in UMR memory keys (MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD).
	Offload bool
	// CRC32 and CRC32C say which checksums it computes.
	CRC32, CRC32C bool
}

// QuerySigCaps asks the device for its signature offload capabilities.
func (c *Context) QuerySigCaps() (SigCaps, error) {
	var caps C.struct_uv_mlx5_sig_caps
	if rc := C.uv_mlx5_sig_caps(c.c, &caps); rc != 0 {
		return SigCaps{}, fmt.Errorf("mlx5dv_query_device: errno %d", int(rc))
	}
	return SigCaps{
		Mlx5:    caps.mlx5 != 0,
		Offload: caps.offload != 0,
		CRC32:   caps.crc_types&C.MLX5DV_SIG_CRC_TYPE_CAP_CRC32 != 0,
		CRC32C:  caps.crc_types&C.MLX5DV_SIG_CRC_TYPE_CAP_CRC32C != 0,
	}, nil
}

// MkeyQP creates an RC QP that can also post memory key configurations,
// with depth send requests of sge SGEs, completing into cq. Only mlx5
// devices make one; elsewhere the error wraps EOPNOTSUPP (or the driver's
// errno).
func (c *Context) MkeyQP(cq *CQ, depth, sge int) (*QP, error) {
	var cerr C.int
	createMu.Lock()
	qp := C.uv_mlx5_create_qp(c.c, c.pd, cq.cq, cq.cq, nil, C.uint32_t(depth), C.uint32_t(sge), &cerr)
	createMu.Unlock()
	if qp == nil {
		return nil, fmt.Errorf("mlx5dv_create_qp: %w", syscall.Errno(cerr))
	}
	return &QP{qp: qp, Num: uint32(C.uv_qp_num(qp))}, nil
}

// Mkey is an indirect memory key that can carry a block signature.
type Mkey struct {
	k          *C.struct_mlx5dv_mkey
	LKey, RKey uint32
}

// NewSigMkey creates a signature memory key on the context's PD for
// layouts of up to maxEntries entries (mlx5dv_create_mkey).
func (c *Context) NewSigMkey(maxEntries int) (*Mkey, error) {
	if maxEntries <= 0 || maxEntries > 0xffff {
		return nil, fmt.Errorf("mlx5dv_create_mkey: %d entries: %w", maxEntries, syscall.EINVAL)
	}
	var cerr C.int
	k := C.uv_mlx5_create_sig_mkey(c.pd, C.uint16_t(maxEntries), &cerr)
	if k == nil {
		return nil, fmt.Errorf("mlx5dv_create_mkey: %w", syscall.Errno(cerr))
	}
	return &Mkey{k: k, LKey: uint32(k.lkey), RKey: uint32(k.rkey)}, nil
}

// Destroy destroys the key.
func (m *Mkey) Destroy() error {
	if rc := C.mlx5dv_destroy_mkey(m.k); rc != 0 {
		return fmt.Errorf("mlx5dv_destroy_mkey: %w", syscall.Errno(rc))
	}
	return nil
}

// Interleaved is one entry of an interleaved layout: Bytes bytes at Addr
// of the MR with LKey, then Skip bytes, per repetition.
type Interleaved struct {
	Addr        uint64
	Bytes, Skip uint32
	LKey        uint32
}

// CRC types and block sizes of a SigDomain.
const (
	CRCNone   = -1
	CRC32     = C.MLX5DV_SIG_CRC_TYPE_CRC32
	CRC32C    = C.MLX5DV_SIG_CRC_TYPE_CRC32C
	Block512  = C.MLX5DV_BLOCK_SIZE_512
	Block4048 = C.MLX5DV_BLOCK_SIZE_4048
	Block4096 = C.MLX5DV_BLOCK_SIZE_4096
)

// SigDomain is one domain's signature: CRC is CRCNone for plain data.
type SigDomain struct {
	CRC   int
	Block int
}

// ConfigureMkey posts a signaled configuration of m on q (a QP from
// MkeyQP): access, an interleaved layout repeated repeat times, and the
// memory and wire domains' CRCs (seed 0xFFFFFFFF, every byte checked).
func (q *QP) ConfigureMkey(m *Mkey, wrID uint64, access int, repeat int, layout []Interleaved, mem, wire SigDomain) error {
	if len(layout) == 0 || len(layout) > 0xffff || repeat <= 0 {
		return fmt.Errorf("mkey configure: %d entries, repeat %d: %w", len(layout), repeat, syscall.EINVAL)
	}
	entries := (*C.struct_mlx5dv_mr_interleaved)(C.malloc(C.size_t(len(layout)) * C.sizeof_struct_mlx5dv_mr_interleaved))
	defer C.free(unsafe.Pointer(entries))
	for i, p := range unsafe.Slice(entries, len(layout)) {
		p.addr, p.bytes_count, p.bytes_skip, p.lkey = C.uint64_t(layout[i].Addr), C.uint32_t(layout[i].Bytes),
			C.uint32_t(layout[i].Skip), C.uint32_t(layout[i].LKey)
		unsafe.Slice(entries, len(layout))[i] = p
	}
	rc := C.uv_mlx5_configure(q.qp, m.k, C.uint64_t(wrID), C.uint32_t(access), C.uint32_t(repeat), C.uint16_t(len(layout)), entries,
		C.struct_uv_mlx5_domain{crc: C.int(mem.CRC), block: C.int(mem.Block)},
		C.struct_uv_mlx5_domain{crc: C.int(wire.CRC), block: C.int(wire.Block)})
	if rc != 0 {
		return fmt.Errorf("mkey configure: %w", syscall.Errno(rc))
	}
	return nil
}

// InvalidateMkey posts a signaled local invalidate of m on q.
func (q *QP) InvalidateMkey(m *Mkey, wrID uint64) error {
	if rc := C.uv_mlx5_invalidate(q.qp, m.k, C.uint64_t(wrID)); rc != 0 {
		return fmt.Errorf("local invalidate: %w", syscall.Errno(rc))
	}
	return nil
}

// SigErr is mlx5dv_mkey_check's report of the first bad block: its byte
// offset in the key's address space, the stored and the computed CRC.
type SigErr struct {
	Offset           uint64
	Expected, Actual uint32
}

// Check runs mlx5dv_mkey_check: bad is false when every block matched
// since the last check.
func (m *Mkey) Check() (e SigErr, bad bool, err error) {
	var b C.int
	var off C.uint64_t
	var exp, act C.uint32_t
	if rc := C.uv_mlx5_check(m.k, &b, &off, &exp, &act); rc != 0 {
		return SigErr{}, false, fmt.Errorf("mlx5dv_mkey_check: %w", syscall.Errno(-rc))
	}
	return SigErr{Offset: uint64(off), Expected: uint32(exp), Actual: uint32(act)}, b != 0, nil
}
