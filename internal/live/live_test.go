package live_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urma-go/sdk/internal/leakcheck"
	"github.com/urma-go/sdk/internal/live"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func TestCounts(t *testing.T) {
	before := live.Now()
	live.Contexts(1)
	live.Objects(3)
	assert.Equal(t, live.Counts{Contexts: before.Contexts + 1, Objects: before.Objects + 3}, live.Now())
	live.Objects(-3)
	live.Contexts(-1)
	assert.Equal(t, before, live.Now())
}
