package loopback

import "github.com/urma-go/sdk/provider"

// asSegment, asTarget and asRemote return the loopback object m or r is,
// or nil for another provider's object or none.

func asSegment(m provider.MemRef) *segment {
	s, _ := m.(*segment)
	return s
}

func asTarget(m provider.MemRef) *target {
	t, _ := m.(*target)
	return t
}

func asRemote(r provider.Remote) *remote {
	rem, _ := r.(*remote)
	return rem
}
