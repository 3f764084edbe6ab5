package rdmanl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
)

// ErrMalformed is the root of every error about a message that does not
// follow the netlink layout: a length that runs past its buffer, an
// attribute of the wrong size.
var ErrMalformed = errors.New("rdmanl: malformed netlink message")

// Netlink header layout (struct nlmsghdr, struct nlattr), in the host's
// byte order.
const (
	nlmsgHdrLen = 16
	nlaHdrLen   = 4
	nlmsgError  = 2
	nlmsgDone   = 3
	nlmFMulti   = 0x2
)

var order = binary.NativeEndian

func align4(n int) int { return (n + 3) &^ 3 }

// walk calls fn with the type (flags masked off) and value of every
// attribute in b. A length shorter than the header or past the end of b
// is ErrMalformed.
func walk(b []byte, fn func(typ uint16, v []byte) error) error {
	for len(b) > 0 {
		if len(b) < nlaHdrLen {
			return fmt.Errorf("%w: %d trailing bytes, too short for an attribute", ErrMalformed, len(b))
		}
		n := int(order.Uint16(b))
		typ := order.Uint16(b[2:]) & attrTypeMaskBits
		if n < nlaHdrLen || n > len(b) {
			return fmt.Errorf("%w: attribute %d says %d bytes, %d remain", ErrMalformed, typ, n, len(b))
		}
		if err := fn(typ, b[nlaHdrLen:n]); err != nil {
			return err
		}
		if a := align4(n); a < len(b) {
			b = b[a:]
		} else {
			b = nil
		}
	}
	return nil
}

func u8(typ uint16, v []byte) (uint8, error) {
	if len(v) != 1 {
		return 0, sizeErr(typ, v, 1)
	}
	return v[0], nil
}

func u32(typ uint16, v []byte) (uint32, error) {
	if len(v) != 4 {
		return 0, sizeErr(typ, v, 4)
	}
	return order.Uint32(v), nil
}

func u64(typ uint16, v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, sizeErr(typ, v, 8)
	}
	return order.Uint64(v), nil
}

// str reads a NUL-terminated string attribute; a missing NUL is tolerated.
func str(v []byte) string {
	for i, c := range v {
		if c == 0 {
			return string(v[:i])
		}
	}
	return string(v)
}

func sizeErr(typ uint16, v []byte, want int) error {
	return fmt.Errorf("%w: attribute %d has %d bytes, want %d", ErrMalformed, typ, len(v), want)
}

// owner decodes the attributes every resource entry shares. It reports
// whether typ was one of them.
func (o *Owner) decode(typ uint16, v []byte) (bool, error) {
	switch typ {
	case attrResPID:
		p, err := u32(typ, v)
		o.PID = p
		return true, err
	case attrKernName:
		o.Kernel = str(v)
		return true, nil
	}
	return false, nil
}

// table walks a dump message's payload: the nested table attribute
// tableAttr, whose entries (entryAttr) are passed to fn. Other top-level
// attributes (the device's index and name) are skipped.
func table(payload []byte, tableAttr, entryAttr uint16, fn func(entry []byte) error) error {
	return walk(payload, func(typ uint16, v []byte) error {
		if typ != tableAttr {
			return nil
		}
		return walk(v, func(typ uint16, e []byte) error {
			if typ != entryAttr {
				return nil
			}
			return fn(e)
		})
	})
}

// DecodeQPs appends the QPs of one RES_QP_GET reply payload (the bytes
// after the netlink header) to qps.
func DecodeQPs(qps []QP, payload []byte) ([]QP, error) {
	err := table(payload, attrResQP, attrResQPEntry, func(e []byte) error {
		var q QP
		err := walk(e, func(typ uint16, v []byte) error {
			if ok, err := q.Owner.decode(typ, v); ok {
				return err
			}
			var err error
			switch typ {
			case attrPortIndex:
				q.Port, err = u32(typ, v)
			case attrLQPN:
				q.QPN, err = u32(typ, v)
			case attrRQPN:
				q.RemoteQPN, err = u32(typ, v)
				q.HasRemote = err == nil
			case attrResType:
				var t uint8
				t, err = u8(typ, v)
				q.Type = QPType(t)
			case attrResState:
				var s uint8
				s, err = u8(typ, v)
				q.State = QPState(s)
			case attrPDN:
				q.PDN, err = u32(typ, v)
			}
			return err
		})
		qps = append(qps, q)
		return err
	})
	return qps, err
}

// DecodeCQs appends the CQs of one RES_CQ_GET reply payload to cqs.
func DecodeCQs(cqs []CQ, payload []byte) ([]CQ, error) {
	err := table(payload, attrResCQ, attrResCQEntry, func(e []byte) error {
		var c CQ
		err := walk(e, func(typ uint16, v []byte) error {
			if ok, err := c.Owner.decode(typ, v); ok {
				return err
			}
			var err error
			switch typ {
			case attrCQN:
				c.CQN, err = u32(typ, v)
			case attrCQE:
				c.CQE, err = u32(typ, v)
			case attrUseCnt:
				c.Users, err = u64(typ, v)
			case attrCtxN:
				c.Context, err = u32(typ, v)
			}
			return err
		})
		cqs = append(cqs, c)
		return err
	})
	return cqs, err
}

// DecodeMRs appends the MRs of one RES_MR_GET reply payload to mrs.
func DecodeMRs(mrs []MR, payload []byte) ([]MR, error) {
	err := table(payload, attrResMR, attrResMREntry, func(e []byte) error {
		var m MR
		err := walk(e, func(typ uint16, v []byte) error {
			if ok, err := m.Owner.decode(typ, v); ok {
				return err
			}
			var err error
			switch typ {
			case attrMRN:
				m.MRN, err = u32(typ, v)
			case attrRKey:
				m.RKey, err = u32(typ, v)
				m.HasKeys = err == nil
			case attrLKey:
				m.LKey, err = u32(typ, v)
			case attrMRLen:
				m.Len, err = u64(typ, v)
			case attrPDN:
				m.PDN, err = u32(typ, v)
			}
			return err
		})
		mrs = append(mrs, m)
		return err
	})
	return mrs, err
}

// maxSRQRanges bounds the QP ranges kept per SRQ, so that a malformed
// reply cannot make one entry grow without bound; the kernel merges
// consecutive QP numbers, so real SRQs stay far below it.
const maxSRQRanges = 4096

// DecodeSRQs appends the SRQs of one RES_SRQ_GET reply payload to srqs.
func DecodeSRQs(srqs []SRQ, payload []byte) ([]SRQ, error) {
	err := table(payload, attrResSRQ, attrResSRQEntry, func(e []byte) error {
		var s SRQ
		err := walk(e, func(typ uint16, v []byte) error {
			if ok, err := s.Owner.decode(typ, v); ok {
				return err
			}
			var err error
			switch typ {
			case attrSRQN:
				s.SRQN, err = u32(typ, v)
			case attrResType:
				s.Type, err = u8(typ, v)
			case attrPDN:
				s.PDN, err = u32(typ, v)
			case attrCQN:
				s.CQN, err = u32(typ, v)
				s.HasCQ = err == nil
			case attrResQP:
				err = walk(v, func(typ uint16, qe []byte) error {
					if typ != attrResQPEntry {
						return nil
					}
					r, err := decodeRange(qe)
					if err != nil || r.First == 0 {
						return err
					}
					if len(s.QPs) >= maxSRQRanges {
						return fmt.Errorf("%w: SRQ %d lists more than %d QP ranges", ErrMalformed, s.SRQN, maxSRQRanges)
					}
					s.QPs = append(s.QPs, r)
					return nil
				})
			}
			return err
		})
		srqs = append(srqs, s)
		return err
	})
	return srqs, err
}

// decodeRange reads one QP entry of an SRQ: a single LQPN or a
// MIN_RANGE..MAX_RANGE pair.
func decodeRange(e []byte) (QPRange, error) {
	var r QPRange
	err := walk(e, func(typ uint16, v []byte) error {
		var err error
		switch typ {
		case attrLQPN:
			r.First, err = u32(typ, v)
			r.Last = r.First
		case attrMinRange:
			r.First, err = u32(typ, v)
		case attrMaxRange:
			r.Last, err = u32(typ, v)
		}
		return err
	})
	if err == nil && r.Last < r.First {
		err = fmt.Errorf("%w: QP range %d..%d ends before it starts", ErrMalformed, r.First, r.Last)
	}
	return r, err
}

// DecodeDevices appends the device of one CMD_GET reply payload to devs.
func DecodeDevices(devs []Device, payload []byte) ([]Device, error) {
	var d Device
	seen := false
	err := walk(payload, func(typ uint16, v []byte) error {
		var err error
		switch typ {
		case attrDevIndex:
			d.Index, err = u32(typ, v)
			seen = true
		case attrDevName:
			d.Name = str(v)
		case attrDevProtocol:
			d.Protocol = str(v)
		}
		return err
	})
	if err != nil {
		return devs, err
	}
	if !seen || d.Name == "" {
		return devs, fmt.Errorf("%w: a device without an index or a name", ErrMalformed)
	}
	return append(devs, d), nil
}

// Messages splits a buffer the kernel returned into the payloads of the
// messages of type want and sequence number seq. done reports the end of
// a dump (NLMSG_DONE, or a message that is not part of a multipart
// reply); an NLMSG_ERROR with a non-zero code is returned as that
// syscall.Errno. Messages of another sequence number (the late reply of
// an earlier, interrupted request) are skipped.
func Messages(b []byte, seq uint32, want uint16) (payloads [][]byte, done bool, err error) {
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return payloads, false, fmt.Errorf("%w: %d trailing bytes, too short for a message header", ErrMalformed, len(b))
		}
		n := int(order.Uint32(b))
		typ := order.Uint16(b[4:])
		flags := order.Uint16(b[6:])
		mseq := order.Uint32(b[8:])
		if n < nlmsgHdrLen || n > len(b) {
			return payloads, false, fmt.Errorf("%w: message says %d bytes, %d remain", ErrMalformed, n, len(b))
		}
		body := b[nlmsgHdrLen:n]
		if a := align4(n); a < len(b) {
			b = b[a:]
		} else {
			b = nil
		}
		if mseq != seq {
			continue
		}
		switch typ {
		case nlmsgDone:
			// A dump that failed part way ends with a negative errno here.
			if len(body) >= 4 {
				if code := int32(order.Uint32(body)); code < 0 {
					return payloads, true, syscall.Errno(-code)
				}
			}
			return payloads, true, nil
		case nlmsgError:
			if len(body) < 4 {
				return payloads, false, fmt.Errorf("%w: error message of %d bytes", ErrMalformed, len(body))
			}
			if code := int32(order.Uint32(body)); code < 0 {
				return payloads, true, syscall.Errno(-code)
			}
			return payloads, true, nil
		case want:
			payloads = append(payloads, body)
			if flags&nlmFMulti == 0 {
				done = true
			}
		default:
			return payloads, false, fmt.Errorf("%w: message type %#x, want %#x", ErrMalformed, typ, want)
		}
	}
	return payloads, done, nil
}

// request builds a dump request for cmd, restricted to the device of
// index dev when hasDev is set (device indexes start at 0).
func request(cmd uint16, seq uint32, dev uint32, hasDev bool) []byte {
	n := nlmsgHdrLen
	if hasDev {
		n += nlaHdrLen + 4
	}
	b := make([]byte, n)
	order.PutUint32(b, uint32(n))
	order.PutUint16(b[4:], msgType(cmd))
	order.PutUint16(b[6:], 0x1|0x300) // NLM_F_REQUEST | NLM_F_DUMP
	order.PutUint32(b[8:], seq)
	if hasDev {
		order.PutUint16(b[16:], nlaHdrLen+4)
		order.PutUint16(b[18:], attrDevIndex)
		order.PutUint32(b[20:], dev)
	}
	return b
}
