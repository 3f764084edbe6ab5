//go:build linux && cgo && urma_verbs

package verbs

/*
#cgo LDFLAGS: -lmlx5
#include "mlx5.h"
*/
import "C"

import "fmt"

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
