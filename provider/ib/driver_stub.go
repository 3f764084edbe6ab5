//go:build !linux || !cgo || urma_noverbs

package ib

import "github.com/urma-go/sdk/provider"

func devices() ([]provider.Device, error) {
	return nil, provider.Errorf(provider.ErrNotSupported,
		"the ib provider needs linux, cgo and the rdma-core headers (this build has CGO_ENABLED=0, another OS, or the urma_noverbs tag)")
}
