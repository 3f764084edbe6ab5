package jetty_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/urma-go/sdk/urma"
)

// TestJFRStateUMDKValues pins JFRState to urma_jfr_state_t, whose ERROR
// is 2: a JFR has no SUSPENDED state.
func TestJFRStateUMDKValues(t *testing.T) {
	assert.Equal(t, urma.JFRState(0), urma.JFRStateReset, "URMA_JFR_STATE_RESET")
	assert.Equal(t, urma.JFRState(1), urma.JFRStateReady, "URMA_JFR_STATE_READY")
	assert.Equal(t, urma.JFRState(2), urma.JFRStateError, "URMA_JFR_STATE_ERROR")
	assert.Equal(t, "ERROR", urma.JFRStateError.String())
	assert.Equal(t, "JFRState(3)", urma.JFRState(3).String())
}
