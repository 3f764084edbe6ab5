// Package segment registers memory for remote access and imports the
// memory of peers: Alloc and Register give a *Segment, its Descriptor goes to
// the peer out of band together with the token, and the peer's Import gives
// a *Target that one-sided operations address.
//
// Access rights follow URMA: LocalOnly for private memory, or some of Read,
// Write and Atomic for what peers may do; Write needs Read and Atomic needs
// both. The owner always has full local access.
package segment
