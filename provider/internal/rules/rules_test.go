package rules_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/rules"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func TestErrors(t *testing.T) {
	assert.ErrorIs(t, rules.Closed("jfs"), provider.ErrClosed)
	assert.ErrorContains(t, rules.Closed("jfs"), "jfs is closed")
	assert.ErrorIs(t, rules.NotBound(), provider.ErrInvalid)
	assert.ErrorIs(t, rules.BoundElsewhere(provider.JettyID{ID: 3}), provider.ErrInvalid)
	err := rules.NoTarget(provider.OpFAdd, provider.RM)
	assert.ErrorIs(t, err, provider.ErrInvalid)
	assert.ErrorContains(t, err, "FADD in RM mode needs WR.To", "the message names the field a user sets")
	assert.ErrorIs(t, rules.ModeMismatch(provider.UM, provider.RM), provider.ErrInvalid)
}

// Running out of descriptors is not running out of memory.
func TestResource(t *testing.T) {
	err := rules.Resource("memfd_create", fmt.Errorf("wrapped: %w", syscall.EMFILE))
	require.ErrorIs(t, err, provider.ErrAgain)
	require.NotErrorIs(t, err, provider.ErrNoMemory)
	require.Contains(t, err.Error(), "out of file descriptors")
	require.ErrorIs(t, rules.Resource("eventfd", syscall.ENFILE), provider.ErrAgain)
	require.ErrorIs(t, rules.Resource("mmap", syscall.ENOMEM), provider.ErrNoMemory)
}
