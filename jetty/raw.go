package jetty

import (
	"reflect"
	"unsafe"

	"github.com/urma-go/sdk/internal/layout"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
)

// The record types of this package and of segment have the provider's
// layout (checked when the packages initialize), so the data path hands
// slices of them to the provider as they are.

// rawCRs is crs as the provider's records.
func rawCRs(crs []CR) []provider.CR {
	if len(crs) == 0 {
		return nil
	}
	return unsafe.Slice((*provider.CR)(unsafe.Pointer(&crs[0])), len(crs))
}

// rawSGEs is s as the provider's SGEs.
func rawSGEs(s []segment.SGE) []provider.SGE {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*provider.SGE)(unsafe.Pointer(&s[0])), len(s))
}

// A WR has the provider's layout too: its To points to a Remote, which
// begins with the provider.RemoteRef the provider reads through Target.
func init() { layout.Must(reflect.TypeFor[WR](), reflect.TypeFor[provider.WR]()) }

// rawWRs is wrs as the provider's requests.
func rawWRs(wrs []WR) []provider.WR {
	if len(wrs) == 0 {
		return nil
	}
	return unsafe.Slice((*provider.WR)(unsafe.Pointer(&wrs[0])), len(wrs))
}

// rawWR fills p with w in the provider's form; p.Local aliases w.Local.
func rawWR(p *provider.WR, w *WR) { *p = *(*provider.WR)(unsafe.Pointer(w)) }

// A RecvWR has the provider's layout too.
func init() { layout.Must(reflect.TypeFor[RecvWR](), reflect.TypeFor[provider.RecvWR]()) }

// rawRecvWRs is wrs as the provider's receive requests.
func rawRecvWRs(wrs []RecvWR) []provider.RecvWR {
	if len(wrs) == 0 {
		return nil
	}
	return unsafe.Slice((*provider.RecvWR)(unsafe.Pointer(&wrs[0])), len(wrs))
}
