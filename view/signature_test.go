package view_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

func randomBlocks(t *testing.T, n int) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestSignatureRoundTrip(t *testing.T) {
	for _, kind := range []view.SigKind{view.SigCRC32, view.SigCRC32C} {
		table := crc32.IEEETable
		if kind == view.SigCRC32C {
			table = crc32.MakeTable(crc32.Castagnoli)
		}
		for _, bs := range []int{view.Block512, view.Block4096, view.BlockChunk} {
			s := view.Signature{Kind: kind, BlockSize: bs}
			plain := randomBlocks(t, 3*bs)
			n, err := s.ProtectedLen(len(plain))
			require.NoError(t, err)
			require.Equal(t, 3*(bs+4), n)
			prot := make([]byte, n)
			require.NoError(t, s.Insert(prot, plain))
			for i := 0; i < 3; i++ {
				blk := prot[i*(bs+4):][:bs+4]
				require.Equal(t, plain[i*bs:(i+1)*bs], blk[:bs], "%v/%d block %d data", kind, bs, i)
				require.Equal(t, crc32.Checksum(plain[i*bs:(i+1)*bs], table), binary.BigEndian.Uint32(blk[bs:]),
					"%v/%d block %d: the signature is hash/crc32 of the block", kind, bs, i)
			}
			require.NoError(t, s.Check(prot))
			back := make([]byte, len(plain))
			require.NoError(t, s.Strip(back, prot))
			require.Equal(t, plain, back)
		}
	}
}

func TestSignatureFindsTheBadBlock(t *testing.T) {
	s := view.Signature{Kind: view.SigCRC32, BlockSize: view.Block512}
	plain := randomBlocks(t, 4*512)
	prot := make([]byte, 4*516)
	require.NoError(t, s.Insert(prot, plain))
	prot[2*516+100] ^= 0x01 // one bit in block 2
	err := s.Check(prot)
	require.ErrorIs(t, err, urma.ErrSignature)
	var se *view.SigError
	require.True(t, errors.As(err, &se))
	require.Equal(t, 2, se.Block)
	require.Equal(t, crc32.ChecksumIEEE(plain[2*512:3*512]), se.Expected, "the stored value")
	require.Equal(t, crc32.ChecksumIEEE(prot[2*516:2*516+512]), se.Actual, "what the data gives")
	require.Contains(t, se.Error(), "block 2")

	back := make([]byte, len(plain))
	err = s.Strip(back, prot)
	require.ErrorAs(t, err, &se)
	require.Equal(t, 2, se.Block)
	require.Equal(t, plain[:2*512], back[:2*512], "blocks before the bad one are stripped")

	prot[2*516+100] ^= 0x01
	binary.BigEndian.PutUint32(prot[3*516+512:], 0) // a bad stored signature is found too
	require.ErrorAs(t, s.Check(prot), &se)
	require.Equal(t, 3, se.Block)
	require.Zero(t, se.Expected)
}

func TestSignatureRefusesBadShapes(t *testing.T) {
	for _, s := range []view.Signature{{}, {Kind: view.SigCRC32}, {Kind: 9, BlockSize: 512}, {Kind: view.SigCRC32, BlockSize: 1000}} {
		require.ErrorIs(t, s.Validate(), urma.ErrInvalid, "%+v", s)
		_, err := s.ProtectedLen(512)
		require.ErrorIs(t, err, urma.ErrInvalid, "%+v", s)
	}
	s := view.Signature{Kind: view.SigCRC32C, BlockSize: view.Block512}
	_, err := s.ProtectedLen(513)
	require.ErrorIs(t, err, urma.ErrInvalid, "partial block")
	_, err = s.PlainLen(512)
	require.ErrorIs(t, err, urma.ErrInvalid, "protected form without its signature")
	require.ErrorIs(t, s.Insert(make([]byte, 512), make([]byte, 512)), urma.ErrInvalid, "dst too short")
	require.ErrorIs(t, s.Strip(make([]byte, 511), make([]byte, 516)), urma.ErrInvalid, "dst too short")
	require.ErrorIs(t, s.Check(make([]byte, 515)), urma.ErrInvalid)
}

func BenchmarkSignatureInsert(b *testing.B) {
	for _, kind := range []view.SigKind{view.SigCRC32, view.SigCRC32C} {
		b.Run(kind.String(), func(b *testing.B) {
			s := view.Signature{Kind: kind, BlockSize: view.Block4096}
			plain := make([]byte, 256*4096)
			prot := make([]byte, 256*4100)
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				if err := s.Insert(prot, plain); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCopyOnly(b *testing.B) {
	plain := make([]byte, 256*4096)
	dst := make([]byte, len(plain))
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		copy(dst, plain)
	}
}
