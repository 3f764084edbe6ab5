// Package segment registers memory for remote access and imports the
// memory of peers: Alloc and Register give a *Segment, its Descriptor goes to
// the peer out of band together with the token, and the peer's Import gives
// a *Target that one-sided operations address.
//
// Access rights follow URMA: LocalOnly for private memory, or some of Read,
// Write and Atomic for what peers may do; Write needs Read and Atomic needs
// both. The owner always has full local access.
//
// An SGE is a range of a segment, a target or a view (package view) as a
// request names it; Segment.SGE and Target.SGE make them. Segment.Uint64
// is a word of local memory that peers change with remote atomics.
//
// On devices that map imports (urma.DeviceAttr.MapImports), Target.Map
// maps a target into this process as a *Mapping: the owner's memory
// itself, loaded and stored directly, with no more access than granted.
package segment
