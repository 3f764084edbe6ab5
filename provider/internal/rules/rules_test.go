package rules_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

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
