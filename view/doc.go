// Package view puts layouts and block signatures on the data path, as an
// mlx5 UMR memory key with a signature does. Programs that do not import it
// pay nothing for it: a JFC's poll checks one counter of requests in
// flight through views.
//
// A Layout describes a view over registered memory as one stream: a list
// of (memory, offset, length) entries, or the interleaved "strided
// repeated block" form that mlx5's UMR memory keys offer. Gather and
// Scatter copy a stream in and out of local memory. A Signature protects
// blocks of 512 or 4096 bytes (or the storage example's 4048+44-byte
// chunks) with a CRC32 or CRC32C each: Insert, Check and Strip, where a
// mismatch is a *SigError naming the block, as mlx5dv_mkey_check does.
//
// A View puts both on the data path: its SGE is the local side of WRITE,
// READ, SEND and receives, Expose lets peers WRITE and READ it, Configure
// and Invalidate change and end it. Its Memory and Wire signatures say
// what the data looks like in memory and on the wire, and the direction
// of each transfer decides whether signatures are inserted, checked, or
// checked and stripped. A failed check completes the request with
// urma.CRSignatureErr and Check names the block. Every device runs views
// in software (a bounce segment, the CPU's CRC instructions);
// urma.DeviceAttr.Views says so and urma.DeviceAttr.SigOffload reports
// mlx5 hardware that could do it.
package view
