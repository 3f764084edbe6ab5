package provider_test

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

func TestStatusError(t *testing.T) {
	for s, want := range map[provider.Status]string{
		provider.StatusSuccess:      "success",
		provider.StatusAgain:        "resource temporarily unavailable",
		provider.StatusNoMemory:     "out of memory",
		provider.StatusPermission:   "permission denied",
		provider.StatusTimeout:      "timed out",
		provider.StatusInvalid:      "invalid argument",
		provider.StatusExist:        "already exists",
		provider.StatusInProgress:   "in progress",
		provider.StatusFail:         "failed",
		provider.StatusNotSupported: "not supported",
		provider.StatusNotFound:     "not found",
		provider.StatusBusy:         "busy",
		provider.StatusClosed:       "closed",
		provider.StatusBadState:     "object in wrong state",
		provider.StatusRange:        "out of range",
		provider.StatusSignature:    "signature mismatch",
		provider.Status(12345):      "urma status 12345",
	} {
		assert.Equal(t, want, s.Error())
	}
}

func TestStatusErrnoValues(t *testing.T) {
	for s, e := range map[provider.Status]syscall.Errno{
		provider.StatusAgain: syscall.EAGAIN, provider.StatusNoMemory: syscall.ENOMEM,
		provider.StatusPermission: syscall.EPERM, provider.StatusTimeout: syscall.ETIMEDOUT,
		provider.StatusInvalid: syscall.EINVAL, provider.StatusExist: syscall.EEXIST,
		provider.StatusInProgress: syscall.EINPROGRESS, provider.StatusNotSupported: syscall.EOPNOTSUPP,
		provider.StatusNotFound: syscall.ENOENT, provider.StatusBusy: syscall.EBUSY,
		provider.StatusClosed: syscall.EBADF, provider.StatusBadState: syscall.EBADFD,
		provider.StatusRange: syscall.ERANGE, provider.StatusSignature: syscall.EBADMSG,
	} {
		assert.Equal(t, int32(e), int32(s), "%v", s)
		assert.True(t, errors.Is(s, e), "errors.Is(%v, %v)", s, e)
		wrapped := &urma.OpError{Op: "x", Err: provider.Errorf(s, "detail")}
		assert.True(t, errors.Is(wrapped, e), "wrapped %v is %v", s, e)
		assert.True(t, errors.Is(wrapped, s))
	}
	wrap := func(err error) error { return &urma.OpError{Op: "x", Err: err} }
	assert.False(t, errors.Is(wrap(provider.ErrAgain), syscall.EINVAL))
	assert.False(t, errors.Is(wrap(provider.ErrFail), syscall.Errno(provider.StatusFail)), "FAIL is not an errno")
	assert.False(t, errors.Is(wrap(provider.ErrInvalid), io.EOF))
	assert.False(t, errors.Is(wrap(provider.ErrInvalid), provider.ErrAgain))
	assert.False(t, provider.StatusFail.Is(syscall.Errno(provider.StatusFail)))
}

func TestSentinelsAreStatuses(t *testing.T) {
	for err, s := range map[error]provider.Status{
		provider.ErrNotSupported: provider.StatusNotSupported, provider.ErrAgain: provider.StatusAgain,
		provider.ErrNoMemory: provider.StatusNoMemory, provider.ErrPermission: provider.StatusPermission,
		provider.ErrTimeout: provider.StatusTimeout, provider.ErrInvalid: provider.StatusInvalid,
		provider.ErrExist: provider.StatusExist, provider.ErrInProgress: provider.StatusInProgress,
		provider.ErrFail: provider.StatusFail, provider.ErrNotFound: provider.StatusNotFound,
		provider.ErrBusy: provider.StatusBusy, provider.ErrClosed: provider.StatusClosed,
		provider.ErrBadState: provider.StatusBadState, provider.ErrRange: provider.StatusRange,
	} {
		assert.Equal(t, s, err)
		assert.Equal(t, s, provider.StatusOf(err))
	}
}

func TestOpError(t *testing.T) {
	inner := provider.Errorf(provider.ErrPermission, "token %#x does not match", 7)
	assert.Equal(t, "token 0x7 does not match: permission denied", inner.Error())

	e := &urma.OpError{Op: "segment import", Obj: "seg 3", Err: inner}
	assert.Equal(t, "urma: segment import seg 3: token 0x7 does not match: permission denied", e.Error())
	assert.Equal(t, "urma: jfs post: busy", (&urma.OpError{Op: "jfs post", Err: provider.ErrBusy}).Error())
	assert.Same(t, inner, errors.Unwrap(e))
	assert.ErrorIs(t, e, provider.ErrPermission)
	assert.ErrorIs(t, e, syscall.EPERM)
	assert.NotErrorIs(t, e, provider.ErrInvalid)

	// Through fmt wrapping as well.
	outer := fmt.Errorf("connect: %w", e)
	var oe *urma.OpError
	require.True(t, errors.As(outer, &oe))
	assert.Equal(t, "segment import", oe.Op)
	var st provider.Status
	require.True(t, errors.As(outer, &st))
	assert.Equal(t, provider.StatusPermission, st)
}

func TestStatusOf(t *testing.T) {
	assert.Equal(t, provider.StatusSuccess, provider.StatusOf(nil))
	assert.Equal(t, provider.StatusFail, provider.StatusOf(io.EOF))
	assert.Equal(t, provider.StatusFail, provider.StatusOf(errors.New("x")))
	assert.Equal(t, provider.StatusAgain, provider.StatusOf(&urma.OpError{Op: "x", Err: provider.ErrAgain}))
	assert.Equal(t, provider.StatusBusy, provider.StatusOf(provider.Errorf(provider.ErrBusy, "y")))
	assert.Equal(t, provider.StatusTimeout, provider.StatusOf(fmt.Errorf("w: %w", syscall.ETIMEDOUT)), "plain errno")
	assert.Equal(t, provider.StatusFail, provider.StatusOf(provider.ErrFail))
}

func TestCRString(t *testing.T) {
	cr := provider.CR{Status: provider.CRSuccess, Opcode: provider.CROpSendImm, Len: 4, UserCtx: 7, LocalID: 3,
		Flags: provider.CRFlagRecv | provider.CRFlagImm | provider.CRFlagSolicited, Imm: 0xabc}
	assert.Equal(t, "cr{recv SEND_WITH_IMM SUCCESS len=4 ctx=0x7 local=3 remote=::/0/0 imm=0xabc solicited}", cr.String())
	cr = provider.CR{Status: provider.CRWRFlushErr, WROpcode: provider.OpRead, LocalID: 1}
	assert.Equal(t, "cr{send READ WR_FLUSH_ERR len=0 ctx=0x0 local=1 remote=::/0/0}", cr.String())
}

func TestWRDataLen(t *testing.T) {
	w := provider.WR{Local: []provider.SGE{{Len: 3}, {Len: 5}}, Inline: []byte("abcdefghij")}
	assert.Equal(t, uint64(8), w.DataLen())
	w.Flags = provider.FlagInline
	assert.Equal(t, uint64(10), w.DataLen())
}

// A detail that already ends with the sentinel's text, as a wrapped
// system error's does, is not followed by that text again.
func TestErrorfSaysTheStatusOnce(t *testing.T) {
	err := provider.Errorf(provider.ErrPermission, "runtime directory /x: mkdir /x: %v", syscall.EACCES)
	require.Equal(t, "runtime directory /x: mkdir /x: permission denied", err.Error())
	require.ErrorIs(t, err, provider.ErrPermission)
	err = provider.Errorf(provider.ErrTimeout, "no answer in 5s")
	require.Equal(t, "no answer in 5s: timed out", err.Error())
	err = provider.Errorf(provider.ErrFail, "connection reset by peer")
	require.Equal(t, "connection reset by peer: failed", err.Error(), "only the sentinel's own text counts")
}
