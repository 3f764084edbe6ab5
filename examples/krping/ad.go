package main

import (
	"encoding/binary"
	"fmt"
)

// adSize is the length of krping's advertisement, struct krping_rdma_info.
const adSize = 16

// ad advertises a buffer for the peer to READ or WRITE: {buf u64, rkey
// u32, size u32}, big-endian. In URMA terms buf is the segment's address,
// rkey its token id and size its length; with the session token and the
// sender's EID and UASID that is enough to import it.
type ad struct {
	buf  uint64
	rkey uint32
	size uint32
}

func (a ad) marshal(b []byte) {
	binary.BigEndian.PutUint64(b[0:], a.buf)
	binary.BigEndian.PutUint32(b[8:], a.rkey)
	binary.BigEndian.PutUint32(b[12:], a.size)
}

// parseAd decodes an advertisement; any other length is krping's "bogus
// data".
func parseAd(b []byte) (ad, error) {
	if len(b) != adSize {
		return ad{}, fmt.Errorf("received bogus data, size %d (an advertisement is %d bytes)", len(b), adSize)
	}
	return ad{buf: binary.BigEndian.Uint64(b), rkey: binary.BigEndian.Uint32(b[8:]), size: binary.BigEndian.Uint32(b[12:])}, nil
}
