package provider

import "context"

// TargetMapper is implemented by targets whose memory the provider can map
// into the importer's address space, as UMDK's urma_import_seg does with
// the mapping flag on UnifiedBus: the importer then loads and stores the
// owner's memory directly. DeviceAttr.MapImports says whether a device's
// targets implement it.
type TargetMapper interface {
	// MapTarget maps the target's memory for reading, and for writing
	// too when write is set. The owner checks the import's token and
	// rights again before it hands the memory out: write needs a target
	// that grants WRITE (ErrPermission otherwise), and memory that is
	// not a shareable file (caller memory) gives ErrNotSupported. A
	// mapping for reading only is made with PROT_READ, so that nothing in
	// this process can store to it. ctx bounds the exchange with the
	// owner.
	MapTarget(ctx context.Context, write bool) (MappedMemory, error)
}

// MappedMemory is a target's memory mapped into this process.
type MappedMemory interface {
	// Bytes is the mapped memory, Desc().Len bytes of the target. It is
	// writable only if it was mapped for writing, and valid until Close.
	Bytes() []byte
	// Close unmaps the memory. The caller makes sure that no access to it
	// is in flight and none follows. It is idempotent.
	Close() error
}
