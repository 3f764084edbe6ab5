package provider

// The SDK's wrappers (segment.Segment, segment.Target, jetty.Remote) can be
// put into SGEs and WRs directly. They implement these interfaces, and
// providers call RawMem and RawRemote to reach their own objects.

// MemWrapper is implemented by SDK types that wrap a provider MemRef.
type MemWrapper interface {
	RawMem() MemRef
}

// RemoteWrapper is implemented by SDK types that wrap a provider Remote.
type RemoteWrapper interface {
	RawRemote() Remote
}

// RawMem returns the provider object behind m.
func RawMem(m MemRef) MemRef {
	if w, ok := m.(MemWrapper); ok {
		return w.RawMem()
	}
	return m
}

// RawRemote returns the provider object behind r.
func RawRemote(r Remote) Remote {
	if w, ok := r.(RemoteWrapper); ok {
		return w.RawRemote()
	}
	return r
}
