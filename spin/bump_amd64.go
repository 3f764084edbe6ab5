//go:build amd64 && !race

package spin

// bump adds one to the tick count and returns it. A tick is the hot
// instruction of a spin loop, and an atomic add there is a locked
// instruction, a full fence on every turn. On amd64 a word-sized plain
// access does not tear, so concurrent loops sharing a Pacer at worst lose
// a few counts, which only delays a clock read. The race detector build
// counts atomically (bump_other.go).
func bump(n *uint32) uint32 {
	*n++
	return *n
}
