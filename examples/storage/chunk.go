package main

import (
	"encoding/binary"

	"github.com/urma-go/sdk/view"
)

// A stored chunk is 4096 bytes: 4048 of data, then 48 of metadata {ID u64,
// reserved 36 bytes, CRC32 u32}. The CRC32 (IEEE) covers the data and the
// metadata before it, 4092 bytes: view.BlockChunk. On the wire a chunk
// is the same 4096 bytes, so both ends' views carry it with its CRC.
const (
	chunkSize = 4096
	chunkData = 4048
	chunkMeta = 48
	metaWire  = chunkMeta - view.SigSize // ID and reserved: what travels before the CRC
)

// chunkSig is the signature of stored chunks, and of chunks on the wire.
var chunkSig = &view.Signature{Kind: view.SigCRC32, BlockSize: view.BlockChunk}

// chunksFor is how many chunks a payload of n bytes takes.
func chunksFor(n int) int { return (n + chunkData - 1) / chunkData }

// putMeta writes a chunk's ID and clears its reserved bytes.
func putMeta(meta []byte, id uint64) {
	binary.BigEndian.PutUint64(meta, id)
	clear(meta[8:metaWire])
}

// metaID is the ID a chunk's metadata carries.
func metaID(meta []byte) uint64 { return binary.BigEndian.Uint64(meta) }
