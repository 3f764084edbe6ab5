package rdmanl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecode: the decoders read what the kernel sends, and must turn any
// bytes into entries or an error, never a panic or an endless loop; what
// they accept must hold together.
func FuzzDecode(f *testing.F) {
	f.Add(payloadOf(nest(attrResQP, nest(attrResQPEntry, aU32(attrLQPN, 17), aU8(attrResType, 2), aU32(attrResPID, 1)))))
	f.Add(payloadOf(nest(attrResSRQ, nest(attrResSRQEntry, aU32(attrSRQN, 1),
		nest(attrResQP, nest(attrResQPEntry, aU32(attrMinRange, 17), aU32(attrMaxRange, 19)))))))
	f.Add(payloadOf(nest(attrResMR, nest(attrResMREntry, aU64(attrMRLen, 4096), aU32(attrRKey, 5)))))
	f.Add(msg(msgType(cmdResCQGet), nlmFMulti, 1, nest(attrResCQ, nest(attrResCQEntry, aU32(attrCQE, 3)))))
	recorded, _ := filepath.Glob("testdata/*.nl")
	for _, name := range recorded {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeQPs(nil, b)
		_, _ = DecodeCQs(nil, b)
		_, _ = DecodeMRs(nil, b)
		_, _ = DecodeDevices(nil, b)
		srqs, err := DecodeSRQs(nil, b)
		if err == nil {
			for _, s := range srqs {
				require.LessOrEqual(t, len(s.QPs), maxSRQRanges)
				for _, r := range s.QPs {
					require.LessOrEqual(t, r.First, r.Last)
				}
			}
		}
		for _, typ := range []uint16{msgType(cmdResQPGet), msgType(cmdGet)} {
			ps, _, _ := Messages(b, 1, typ)
			for _, p := range ps {
				require.LessOrEqual(t, len(p), len(b))
			}
		}
	})
}
