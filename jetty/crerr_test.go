package jetty_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

func TestCRErr(t *testing.T) {
	ok := jetty.CR{Status: urma.CRSuccess}
	assert.True(t, ok.OK())
	assert.NoError(t, ok.Err())
	bad := jetty.CR{Status: urma.CRRemAccessAbortErr, WROpcode: urma.OpWrite, UserCtx: 0x2a}
	assert.False(t, bad.OK())
	var ce *jetty.CRError
	require.True(t, errors.As(bad.Err(), &ce))
	assert.Equal(t, urma.CRRemAccessAbortErr, ce.Status)
	assert.Equal(t, "urma: WRITE completed with REM_ACCESS_ABORT_ERR (ctx 0x2a)", bad.Err().Error())
	recv := jetty.CR{Status: urma.CRLocLenErr, Opcode: jetty.CRSendImm, Flags: jetty.CRRecv, UserCtx: 3}
	assert.Equal(t, "urma: receive (SEND_WITH_IMM) completed with LOC_LEN_ERR (ctx 0x3)", recv.Err().Error())
	sig := jetty.CR{Status: urma.CRSignatureErr, WROpcode: urma.OpRead}
	assert.ErrorIs(t, sig.Err(), urma.ErrSignature)
	sig.Status = urma.CRLocDataPoison
	assert.NotErrorIs(t, sig.Err(), urma.ErrSignature)
}

func TestCRString(t *testing.T) {
	cr := jetty.CR{Status: urma.CRSuccess, Opcode: jetty.CRSendImm, Len: 4, UserCtx: 7, LocalID: 3,
		Flags: jetty.CRRecv | jetty.CRImm | jetty.CRSolicited, Imm: 0xabc}
	assert.Equal(t, "cr{recv SEND_WITH_IMM SUCCESS len=4 ctx=0x7 local=3 remote=::/0/0 imm=0xabc solicited}", cr.String())
}
