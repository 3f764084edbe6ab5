// Package segment registers memory for remote access and imports the
// memory of peers: Alloc and Register give a *Segment, its Descriptor goes to
// the peer out of band together with the token, and the peer's Import gives
// a *Target that one-sided operations address.
//
// Access rights follow URMA: LocalOnly for private memory, or some of Read,
// Write and Atomic for what peers may do; Write needs Read and Atomic needs
// both. The owner always has full local access.
//
// A Layout describes a view over registered memory as one stream: a list
// of (memory, offset, length) entries, or the interleaved "strided
// repeated block" form that mlx5's UMR memory keys offer. Gather and
// Scatter copy a stream in and out of local memory. A Signature protects
// blocks of 512 or 4096 bytes (or the storage example's 4048+44-byte
// chunks) with a CRC32 or CRC32C each: Insert, Check and Strip, where a
// mismatch is a *SigError naming the block, as mlx5dv_mkey_check does.
// Using layouts and signatures as a side of WRITE, READ and SEND, offloaded
// on mlx5 and in software elsewhere, is still to come (issue 6).
package segment
