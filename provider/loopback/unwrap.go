package loopback

import "github.com/urma-go/sdk/provider"

// asSegment, asTarget and asRemote return the loopback object behind m or
// r, or nil. The SDK's SGEs and WRs hold provider objects, so the concrete
// type is tried first: one compare, where provider.RawMem's assertion to
// an interface goes through the runtime's type-assertion cache every time.

func asSegment(m provider.MemRef) *segment {
	if s, ok := m.(*segment); ok {
		return s
	}
	s, _ := provider.RawMem(m).(*segment)
	return s
}

func asTarget(m provider.MemRef) *target {
	if t, ok := m.(*target); ok {
		return t
	}
	t, _ := provider.RawMem(m).(*target)
	return t
}

func asRemote(r provider.Remote) *remote {
	if rem, ok := r.(*remote); ok {
		return rem
	}
	rem, _ := provider.RawRemote(r).(*remote)
	return rem
}
