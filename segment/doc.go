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
//
// A View puts both on the data path, as an mlx5 UMR memory key with a
// signature does: its SGE is the local side of WRITE, READ, SEND and
// receives, Expose lets peers WRITE and READ it, Configure and Invalidate
// change and end it. Its Memory and Wire signatures say what the data looks
// like in memory and on the wire, and the direction of each transfer
// decides whether signatures are inserted, checked, or checked and
// stripped. A failed check completes the request with CRSignatureErr and
// Check names the block. Every device runs views in software (a
// bounce segment, the CPU's CRC instructions); DeviceAttr.Views says so
// and DeviceAttr.SigOffload reports mlx5 hardware that could do it.
package segment
