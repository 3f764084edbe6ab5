package jetty_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urma-go/sdk/jetty"
)

// TestJFRStateUMDKValues pins JFRState to urma_jfr_state_t, whose ERROR
// is 2: a JFR has no SUSPENDED state.
func TestJFRStateUMDKValues(t *testing.T) {
	assert.Equal(t, jetty.JFRState(0), jetty.JFRStateReset, "URMA_JFR_STATE_RESET")
	assert.Equal(t, jetty.JFRState(1), jetty.JFRStateReady, "URMA_JFR_STATE_READY")
	assert.Equal(t, jetty.JFRState(2), jetty.JFRStateError, "URMA_JFR_STATE_ERROR")
	assert.Equal(t, "ERROR", jetty.JFRStateError.String())
	assert.Equal(t, "JFRState(3)", jetty.JFRState(3).String())
}
