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

// PollPoster is implemented by prepared requests that a poll can post
// (jetty.Prepared.PostAfter): the request leaves the moment the poll
// finds completions, before they are turned into records.
type PollPoster interface {
	// PollPost polls jfc once, as jfc.Poll(crs) would, and returns what
	// that returns in n and err. When the poll finds completions, it may
	// post the request right after taking them, and never before: posted
	// tells whether it did, and postErr is then what Post would have
	// returned. The request's own record is never among the n. When it
	// did not post, the caller posts the request itself if it still
	// wants to.
	PollPost(jfc JFC, crs []CR) (n int, posted bool, postErr, err error)
}

// FlagPoster is implemented by prepared requests that can be posted the
// moment a byte of memory takes a value (jetty.Prepared.PostWhen).
type FlagPoster interface {
	// PostOnFlag watches *flag for a short while of the provider's
	// choosing and, if it sees want there, posts the request right
	// away: posted tells whether it did, and postErr is then what Post
	// would have returned. When it did not post (the flag did not change
	// in time, or the request is one the provider does not post this
	// way), the caller looks at the flag itself and posts the request
	// with Post.
	PostOnFlag(flag *byte, want byte) (posted bool, postErr error)
}

// RecvPreparer is implemented by receive queues (a JFR, a Jetty) that can
// check a list of receive requests once and then post it many times
// (jetty.PreparedRecv). The SDK posts the list of a queue without it
// through PostRecv each time.
type RecvPreparer interface {
	// PrepareRecv checks wrs as PostRecv would, without posting them,
	// and keeps a copy of them with its own copies of the SGE lists. On a
	// refusal it returns the index of the first request refused and why.
	PrepareRecv(wrs []RecvWR) (PreparedRecv, int, error)
}

// PreparedRecv is a list of receive requests a RecvPreparer checked. It is
// not safe for concurrent use; its queue is.
type PreparedRecv interface {
	// Len is the number of requests in the list.
	Len() int
	// Post queues the first n requests of the list, as PostRecv of them
	// would, and returns what that would return; n outside [0, Len()] is
	// refused with ErrInvalid and nothing is posted.
	Post(n int) (int, error)
}
