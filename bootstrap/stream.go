package bootstrap

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Write sends b over w as one message: its binary form after a 4-byte
// big-endian length. When w has deadlines (a net.Conn, an *os.File of a
// pipe), ctx's deadline and cancel interrupt a blocked write; otherwise ctx
// is looked at before the write only.
func Write(ctx context.Context, w io.Writer, b *Bundle) error {
	data, err := b.MarshalBinary()
	if err != nil {
		return err
	}
	msg := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data)))
	msg = append(msg, data...)
	return withContext(ctx, w, func() error {
		_, err := w.Write(msg)
		return err
	})
}

// Read receives one bundle that Write sent over r. A message above MaxSize
// is refused before anything of it is held. ctx works as for Write.
func Read(ctx context.Context, r io.Reader) (*Bundle, error) {
	var b Bundle
	err := withContext(ctx, r, func() error {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return err
		}
		size := binary.BigEndian.Uint32(n[:])
		if uint64(size) > uint64(MaxSize) {
			return provider.Errorf(urma.ErrInvalid, "bootstrap: a message of %d bytes, at most %d", size, MaxSize)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return err
		}
		return b.UnmarshalBinary(data)
	})
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// Exchange sends mine over rw and returns the peer's bundle, which the peer
// sends the same way (Write, or its own Exchange): both ends may call it at
// once, the write does not wait for the read. ctx works as for Write.
func Exchange(ctx context.Context, rw io.ReadWriter, mine *Bundle) (*Bundle, error) {
	wrote := make(chan error, 1)
	go func() { wrote <- Write(ctx, rw, mine) }()
	theirs, rerr := Read(ctx, rw)
	werr := <-wrote
	if werr != nil {
		return nil, werr
	}
	if rerr != nil {
		return nil, rerr
	}
	return theirs, nil
}

// deadliner is what a stream with deadlines (net.Conn, *os.File) offers.
type deadliner interface {
	SetDeadline(t time.Time) error
}

// withContext runs op, a read or a write of s, so that ctx's end
// interrupts it where s has deadlines, and reports ctx's error (in the
// SDK's convention) when it did.
func withContext(ctx context.Context, s any, op func() error) error {
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	d, ok := s.(deadliner)
	if !ok || ctx.Done() == nil {
		return wrapIO(op())
	}
	if dl, ok := ctx.Deadline(); ok {
		if d.SetDeadline(dl) != nil {
			return wrapIO(op()) // a stream without deadlines after all
		}
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = d.SetDeadline(time.Unix(1, 0))
		close(fired)
	})
	err := op()
	if !stop() {
		<-fired // it ran, or runs: the deadline it sets must not outlive the call
	}
	_ = d.SetDeadline(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The stream's deadline was ctx's: ctx is done, or about to be.
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			<-ctx.Done()
		}
	}
	if err != nil {
		if cerr := provider.ContextErr(ctx); cerr != nil {
			return cerr
		}
	}
	return wrapIO(err)
}

// wrapIO says which step failed; EOF stays matchable with errors.Is.
func wrapIO(err error) error {
	if err == nil {
		return nil
	}
	var st provider.Status
	if errors.As(err, &st) {
		return err // one of ours, already explained
	}
	return &urma.OpError{Op: "bootstrap", Err: err}
}
