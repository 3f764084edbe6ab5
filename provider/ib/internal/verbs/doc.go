// Package verbs is the cgo layer of the ib provider: thin Go types over
// libibverbs and librdmacm objects, and the C shims for the verbs that
// rdma-core defines static inline. It holds every `import "C"` of the
// provider, so that everything above it is plain Go.
//
// The package builds only on linux with cgo and the urma_verbs tag;
// elsewhere it is empty and the provider reports ErrNotSupported.
//
// Nothing here is safe for concurrent use unless it says so: the provider
// serialises access to each object.
package verbs
