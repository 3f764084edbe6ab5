package jetty

import (
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
)

// The record types of this package and of segment have the provider's
// layout (checked when the packages initialize), so the data path hands
// slices of them to the provider as they are.

// rawCRs is crs as the provider's records.
func rawCRs(crs []CR) []provider.CR {
	if len(crs) == 0 {
		return nil
	}
	return unsafe.Slice((*provider.CR)(unsafe.Pointer(&crs[0])), len(crs))
}

// rawSGEs is s as the provider's SGEs.
func rawSGEs(s []segment.SGE) []provider.SGE {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*provider.SGE)(unsafe.Pointer(&s[0])), len(s))
}

// rawWR fills p with w in the provider's form; p.Local aliases w.Local.
func rawWR(p *provider.WR, w *WR) {
	p.Opcode, p.Flags, p.UserCtx = provider.Opcode(w.Opcode), provider.WRFlags(w.Flags), w.UserCtx
	if w.To != nil {
		p.Target = w.To.p
	} else {
		p.Target = nil
	}
	p.Local, p.Remote, p.Inline = rawSGEs(w.Local), w.Remote.Raw(), w.Inline
	p.Imm, p.Compare, p.Operand = w.Imm, w.Compare, w.Operand
}

// rawRecvWR fills p with w in the provider's form.
func rawRecvWR(p *provider.RecvWR, w *RecvWR) {
	p.UserCtx, p.Local = w.UserCtx, rawSGEs(w.Local)
}
