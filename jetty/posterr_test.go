package jetty

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// listError is an error type that == cannot compare: comparing two
// interfaces that hold it panics.
type listError []string

func (e listError) Error() string { return e[0] }

func TestPostErrorsReuseOnlyARepeatedFullQueue(t *testing.T) {
	var c postErrors
	full := provider.Errorf(urma.ErrAgain, "full")
	a := c.of("jfs", "post", 0, full)
	assert.Same(t, a, c.of("jfs", "post", 0, full), "the same refusal again")
	assert.EqualError(t, a, "urma: jfs post: request 0: "+full.Error())
	assert.NotSame(t, a, c.of("jfs", "post", 1, full), "another index")
	assert.NotSame(t, a, c.of("jfs", "WRITE", 0, full), "another operation")
	other := provider.Errorf(urma.ErrAgain, "full")
	assert.NotSame(t, a, c.of("jfs", "post", 0, other), "another error value")

	bad := provider.Errorf(urma.ErrInvalid, "bad")
	b := c.of("jfs", "post", 0, bad)
	assert.NotSame(t, b, c.of("jfs", "post", 0, bad), "only a full queue's refusal is kept")

	require.NotPanics(t, func() {
		for range 2 {
			e := c.of("jfs", "post", 0, listError{"x"})
			var pe *PostError
			require.True(t, errors.As(e, &pe))
		}
	})
}
