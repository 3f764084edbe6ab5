package provider_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

func TestContextErr(t *testing.T) {
	require.NoError(t, provider.ContextErr(context.Background()))

	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := provider.ContextErr(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, provider.ErrTimeout)
	require.NotErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = provider.ContextErr(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, provider.ErrTimeout)

	why := errors.New("shutting down")
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(why)
	err = provider.ContextErr(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, why)
	require.Contains(t, err.Error(), "shutting down")
}

func TestClosedMatchesNetErrClosed(t *testing.T) {
	err := provider.Errorf(provider.ErrClosed, "jfce")
	require.ErrorIs(t, err, net.ErrClosed)
	require.ErrorIs(t, err, provider.ErrClosed)
	require.NotErrorIs(t, provider.ErrBusy, net.ErrClosed)
}
