package view

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/urma-go/sdk/provider"
)

// SigKind is the checksum a block signature uses.
type SigKind uint8

// Signature kinds.
const (
	// SigCRC32 is CRC-32/IEEE as hash/crc32 computes it: initial value
	// 0xFFFFFFFF and a final inversion, the parameters of mlx5's CRC32
	// block signature with seed 0xFFFFFFFF. That the device's value equals
	// this one is documented by NVIDIA's example but not tested without
	// an mlx5 device.
	SigCRC32 SigKind = iota + 1
	// SigCRC32C is CRC-32C (Castagnoli), same conventions.
	SigCRC32C
)

// String returns the kind's name.
func (k SigKind) String() string {
	switch k {
	case SigCRC32:
		return "CRC32"
	case SigCRC32C:
		return "CRC32C"
	}
	return fmt.Sprintf("SigKind(%d)", uint8(k))
}

// Block sizes a signature protects. BlockChunk is the storage example's
// 4096-byte chunk: 4048 bytes of data and 44 of metadata protected, then
// the 4-byte CRC, so that a protected chunk is exactly 4096 bytes.
const (
	Block512   = 512
	Block4096  = 4096
	BlockChunk = 4092
)

// SigSize is the size of one block's signature in the protected form.
const SigSize = 4

var (
	ieeeTable       = crc32.IEEETable
	castagnoliTable = crc32.MakeTable(crc32.Castagnoli)
)

// Signature describes block signatures: data in blocks of BlockSize bytes,
// each followed by its SigSize-byte checksum (big-endian) in the
// protected form. Insert makes the protected form, Check verifies it and
// Strip turns it back into plain data. The zero value is invalid.
type Signature struct {
	Kind      SigKind
	BlockSize int
}

// Validate checks the kind and block size.
func (s Signature) Validate() error {
	switch {
	case s.Kind != SigCRC32 && s.Kind != SigCRC32C:
		return provider.Errorf(provider.ErrInvalid, "signature kind %v", s.Kind)
	case s.BlockSize != Block512 && s.BlockSize != Block4096 && s.BlockSize != BlockChunk:
		return provider.Errorf(provider.ErrInvalid, "signature block size %d, want 512, 4096 or 4092 (4048+44 chunk)", s.BlockSize)
	}
	return nil
}

// Sum is the checksum of one block.
func (s Signature) Sum(block []byte) uint32 {
	if s.Kind == SigCRC32C {
		return crc32.Checksum(block, castagnoliTable)
	}
	return crc32.Checksum(block, ieeeTable)
}

// ProtectedLen is the length of the protected form of n plain bytes; n
// must be a whole number of blocks.
func (s Signature) ProtectedLen(n int) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if n%s.BlockSize != 0 {
		return 0, provider.Errorf(provider.ErrInvalid, "%d bytes are not whole %d-byte blocks", n, s.BlockSize)
	}
	return n / s.BlockSize * (s.BlockSize + SigSize), nil
}

// PlainLen is the length of the plain form of n protected bytes.
func (s Signature) PlainLen(n int) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if n%(s.BlockSize+SigSize) != 0 {
		return 0, provider.Errorf(provider.ErrInvalid, "%d bytes are not whole %d-byte protected blocks", n, s.BlockSize+SigSize)
	}
	return n / (s.BlockSize + SigSize) * s.BlockSize, nil
}

// Insert writes the protected form of plain into dst, which must be
// exactly ProtectedLen(len(plain)) bytes. dst and plain must not overlap.
func (s Signature) Insert(dst, plain []byte) error {
	n, err := s.ProtectedLen(len(plain))
	if err != nil {
		return err
	}
	if len(dst) != n {
		return provider.Errorf(provider.ErrInvalid, "insert into %d bytes, the protected form takes %d", len(dst), n)
	}
	b := s.BlockSize
	for i := 0; i*b < len(plain); i++ {
		blk := plain[i*b : (i+1)*b]
		out := dst[i*(b+SigSize):]
		copy(out, blk)
		binary.BigEndian.PutUint32(out[b:], s.Sum(blk))
	}
	return nil
}

// Check verifies every block of the protected form p. The first block
// whose checksum does not match is reported as a *SigError.
func (s Signature) Check(p []byte) error {
	if _, err := s.PlainLen(len(p)); err != nil {
		return err
	}
	return s.verify(nil, p)
}

// Strip checks the protected form p and writes its data to dst, which
// must be exactly PlainLen(len(p)) bytes. On a mismatch dst holds the
// blocks before the bad one.
func (s Signature) Strip(dst, p []byte) error {
	n, err := s.PlainLen(len(p))
	if err != nil {
		return err
	}
	if len(dst) != n {
		return provider.Errorf(provider.ErrInvalid, "strip into %d bytes, the plain form takes %d", len(dst), n)
	}
	return s.verify(dst, p)
}

// verify checks the blocks of p in order, copying each good one's data
// to dst when dst is not nil.
func (s Signature) verify(dst, p []byte) error {
	b := s.BlockSize
	for i := 0; i*(b+SigSize) < len(p); i++ {
		blk := p[i*(b+SigSize):][:b+SigSize]
		want := binary.BigEndian.Uint32(blk[b:])
		if got := s.Sum(blk[:b]); got != want {
			return &SigError{Kind: s.Kind, Block: i, Expected: want, Actual: got}
		}
		if dst != nil {
			copy(dst[i*b:], blk[:b])
		}
	}
	return nil
}

// SigError is a block whose checksum does not match, as mlx5dv_mkey_check
// reports it: the block's index, the checksum stored with it and the one
// its data has. It matches provider.ErrSignature with errors.Is.
type SigError struct {
	Kind     SigKind
	Block    int
	Expected uint32
	Actual   uint32
}

// Error describes the mismatch.
func (e *SigError) Error() string {
	return fmt.Sprintf("urma: %v signature mismatch in block %d: stored %#08x, data gives %#08x", e.Kind, e.Block, e.Expected, e.Actual)
}

// Is makes errors.Is(err, provider.ErrSignature) true.
func (e *SigError) Is(target error) bool { return target == provider.ErrSignature }
