package stress

import (
	"encoding/binary"
	"hash/crc32"
)

// blockLen is the length of the WRITE block number seq of worker w: mostly
// small (inline-sized) blocks, some up to a whole slot.
func blockLen(w int, seq uint64) int {
	h := mix(uint64(w)<<48 ^ seq)
	switch h % 8 {
	case 0, 1, 2:
		return 8 + int(h>>8%57) // up to 64 bytes
	case 3, 4, 5:
		return 65 + int(h>>8%448) // up to 512
	}
	return 513 + int(h>>8%(slotSize-512)) // up to a slot
}

// fillBlock writes block seq of worker w into b (len(b) == blockLen): the
// seq first, so that a stale block is told from a torn one, then bytes
// from a generator seeded by both.
func fillBlock(b []byte, w int, seq uint64) {
	x := mix(uint64(w)<<48 ^ seq ^ 0x5eed)
	for i := 0; i < len(b); i += 8 {
		var word [8]byte
		if i == 0 {
			binary.LittleEndian.PutUint64(word[:], seq)
		} else {
			x = mix(x)
			binary.LittleEndian.PutUint64(word[:], x)
		}
		copy(b[i:], word[:])
	}
}

// blockOK reports whether b holds block seq of worker w.
func blockOK(b []byte, w int, seq uint64, scratch []byte) bool {
	n := blockLen(w, seq)
	if len(b) < n || len(scratch) < n {
		return false
	}
	fillBlock(scratch[:n], w, seq)
	return string(b[:n]) == string(scratch[:n])
}

// Message layout: seq, payload length, CRC32 of the payload, payload.
const msgHeader = 16

// fillMsg writes a message of n bytes (n >= msgHeader) for seq into b.
func fillMsg(b []byte, n int, seq uint64) {
	fillBlock(b[msgHeader:n], int(seq%7), seq)
	binary.LittleEndian.PutUint64(b[0:], seq)
	binary.LittleEndian.PutUint32(b[8:], uint32(n-msgHeader))
	binary.LittleEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[msgHeader:n]))
}

// msgOK checks a received message of got bytes: its length and checksum,
// and (for SEND_IMM) that the immediate carries its seq.
func msgOK(b []byte, got uint32, imm uint64, hasImm bool) bool {
	if got < msgHeader || int(got) > len(b) {
		return false
	}
	seq := binary.LittleEndian.Uint64(b[0:])
	n := binary.LittleEndian.Uint32(b[8:])
	if n != got-msgHeader || crc32.ChecksumIEEE(b[msgHeader:got]) != binary.LittleEndian.Uint32(b[12:]) {
		return false
	}
	return !hasImm || imm == seq
}

// mix is splitmix64's finalizer: cheap, and every bit of the input moves
// every bit of the output.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
