package provider

// Preparer is implemented by senders that can check a work request once and
// then post it many times (jetty.Prepared). The SDK posts the request of a
// sender without it through Post each time.
type Preparer interface {
	// Prepare checks w as Post would, without posting it, and keeps a copy
	// of it with its own copy of the SGE list. Inline is kept as it is:
	// like the memory the SGEs name, its bytes are read at each Post.
	Prepare(w *WR) (Prepared, error)
}

// Prepared is a work request a Preparer checked. It is not safe for
// concurrent use.
type Prepared interface {
	// WR is the kept request. Each Post reads its UserCtx, Imm, Compare
	// and Operand; nothing else of it may change.
	WR() *WR
	// Post queues the request once, as Post([]WR{*WR()}) would, and
	// returns what that Post would return.
	Post() (int, error)
}
