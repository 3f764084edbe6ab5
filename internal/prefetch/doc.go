// Package prefetch asks the CPU for cache lines ahead of their use, without
// waiting for them: a loop that will touch several lines that are likely
// elsewhere (another core's cache, or memory) asks for all of them first,
// so that their transfers overlap instead of following one another.
//
// The hints never fault, whatever the address, and never change what a
// program computes; a pointer that is stale or out of range only wastes
// the hint. On amd64 they are PREFETCHT0 and PREFETCHW; elsewhere they do
// nothing.
package prefetch
