package rdmanl

// Builders of netlink messages as the kernel lays them out, for the
// decoder tests.

func attr(typ uint16, v []byte) []byte {
	b := make([]byte, align4(nlaHdrLen+len(v)))
	order.PutUint16(b, uint16(nlaHdrLen+len(v)))
	order.PutUint16(b[2:], typ)
	copy(b[nlaHdrLen:], v)
	return b
}

func aU8(typ uint16, v uint8) []byte { return attr(typ, []byte{v}) }

func aU32(typ uint16, v uint32) []byte {
	b := make([]byte, 4)
	order.PutUint32(b, v)
	return attr(typ, b)
}

// aU64 is a 64-bit value as nla_put_u64_64bit writes it on a machine
// that needs 8-byte alignment: a padding attribute first.
func aU64(typ uint16, v uint64) []byte {
	b := make([]byte, 8)
	order.PutUint64(b, v)
	return append(attr(attrPad, nil), attr(typ, b)...)
}

func aStr(typ uint16, s string) []byte { return attr(typ, append([]byte(s), 0)) }

// nest is a nested attribute with NLA_F_NESTED set, as nla_nest_start
// writes it.
func nest(typ uint16, children ...[]byte) []byte {
	var v []byte
	for _, c := range children {
		v = append(v, c...)
	}
	return attr(typ|0x8000, v)
}

func msg(typ, flags uint16, seq uint32, attrs ...[]byte) []byte {
	var v []byte
	for _, a := range attrs {
		v = append(v, a...)
	}
	b := make([]byte, nlmsgHdrLen+len(v))
	order.PutUint32(b, uint32(len(b)))
	order.PutUint16(b[4:], typ)
	order.PutUint16(b[6:], flags)
	order.PutUint32(b[8:], seq)
	copy(b[nlmsgHdrLen:], v)
	return b
}

func payloadOf(attrs ...[]byte) []byte { return msg(0, 0, 0, attrs...)[nlmsgHdrLen:] }
