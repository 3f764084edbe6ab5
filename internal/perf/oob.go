package perf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/urma-go/sdk/internal/redial"
)

// The out-of-band channel is a TCP connection carrying JSON values: the
// client's hello (its settings and descriptors), the server's welcome,
// then per size a phase to start and one to end it, and a goodbye.

// protoVersion changes when the messages do in a way the other side
// would misread. Fields added with omitempty, whose zero value is what a
// side that does not know them does, leave it alone: a hello without
// Tuned asks for the default loops, which answer on the wire as the tuned
// ones do.
const protoVersion = 1

// DefaultPort is the server's TCP port unless --port says otherwise.
const DefaultPort = 21115

type hello struct {
	Version  int
	Test     string
	Sizes    []int
	Iters    int
	Duration time.Duration
	Mode     int
	Event    bool
	Spin     time.Duration
	Inline   int
	CAS      bool
	TxDepth  int
	RxDepth  int
	PostList int
	CQMod    int
	Tuned    bool `json:",omitempty"`
	LockFree bool `json:",omitempty"`
	endpointInfo
}

// endpointInfo is what the other side imports: the queue that receives
// (the Jetty in RC mode, else the JFR), the segment and their token.
type endpointInfo struct {
	Queue []byte
	Seg   []byte
	Token uint32
}

type welcome struct {
	Err string
	endpointInfo
}

// phase starts a size (Size), ends it (Done: the client finished;
// the server answers with what it counted) or ends the run (Bye).
type phase struct {
	Size     int
	Done     bool
	Bye      bool
	Received int64
	Err      string
}

// errPeerClosed is the other side closing the out-of-band connection,
// which no message of the protocol does before the goodbye: its process
// ended or gave up on the run. The kernel closes the connection of a
// process that dies, however it dies.
var errPeerClosed = errors.New("the peer closed the connection")

// oob is one end of the channel. A ctx that ends closes the connection, so
// that a blocked read or write returns.
type oob struct {
	c    net.Conn
	enc  *json.Encoder
	dec  *json.Decoder
	in   *io.LimitedReader // under dec: what one message may read
	stop func() bool
	once sync.Once
}

// maxOOBMessage bounds what one message may make this side read and keep:
// the largest the protocol sends is a few descriptors, and a peer (any
// client that connects) must not make it buffer without end.
const maxOOBMessage = 1 << 20

func newOOB(ctx context.Context, c net.Conn) *oob {
	in := &io.LimitedReader{R: c}
	o := &oob{c: c, enc: json.NewEncoder(c), dec: json.NewDecoder(in), in: in}
	o.stop = context.AfterFunc(ctx, func() { _ = c.Close() })
	return o
}

func (o *oob) send(v any) error {
	if err := o.enc.Encode(v); err != nil {
		return fmt.Errorf("out-of-band send: %w", err)
	}
	return nil
}

func (o *oob) recv(v any) error {
	o.in.N = maxOOBMessage
	if err := o.dec.Decode(v); err != nil {
		if o.in.N <= 0 {
			return fmt.Errorf("out-of-band receive: a message of over %d bytes", maxOOBMessage)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("out-of-band receive: %w", errPeerClosed)
		}
		return fmt.Errorf("out-of-band receive: %w", err)
	}
	return nil
}

func (o *oob) close() {
	o.once.Do(func() {
		o.stop()
		_ = o.c.Close()
	})
}

// dialOOB connects to the server, trying for wait while it is not
// listening yet (see redial.Dial), and tells log at once when it is not.
func dialOOB(ctx context.Context, addr string, wait time.Duration, log io.Writer) (net.Conn, error) {
	c, err := redial.Dial(ctx, addr, wait, log, "perf: ")
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("connect to the perf server at %s: %w", addr, err)
	}
	return c, err
}

// acceptOOB waits for one client on l until ctx ends.
func acceptOOB(ctx context.Context, l net.Listener) (net.Conn, error) {
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()
	c, err := l.Accept()
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return c, err
}
