//go:build !linux || !cgo || !urma_verbs

package ib

import "github.com/urma-go/sdk/provider"

func devices() ([]provider.Device, error) {
	return nil, provider.Errorf(provider.ErrNotSupported,
		"this build has no verbs: build with -tags urma_verbs, cgo and the rdma-core headers (Debian: libibverbs-dev librdmacm-dev) on linux")
}
