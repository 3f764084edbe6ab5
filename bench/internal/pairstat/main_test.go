package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarizeTakesTheMedianOfPerRoundRatios(t *testing.T) {
	// Round ratios 0.5, 1, 2, 4: a ratio of the medians (2.5 / 2.5 = 1)
	// differs from the median of the ratios (1.5).
	in := "1 2\n2 2\n4 2\n8 2\n"
	s, err := summarize(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, 4, s.Rounds)
	assert.InDelta(t, 3, s.Ours, 1e-9)
	assert.InDelta(t, 2, s.Theirs, 1e-9)
	assert.InDelta(t, 1.5, s.Ratio, 1e-9)
	assert.InDelta(t, 0.875, s.RatioQ1, 1e-9)
	assert.InDelta(t, 2.5, s.RatioQ3, 1e-9)
}

func TestSummarizeSkipsBrokenRounds(t *testing.T) {
	in := "1 2\n\n- 2\n3 0\nx y\n5\n3 2\n"
	s, err := summarize(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, 2, s.Rounds)
	assert.InDelta(t, 1, s.Ratio, 1e-9)
	assert.Equal(t, "rounds 2 ours 2 theirs 2 ratio 1 q1 0.75 q3 1.25", s.String())
}

func TestSummarizeOfNothingSaysSo(t *testing.T) {
	s, err := summarize(strings.NewReader("nan nan\n"))
	require.NoError(t, err)
	assert.Equal(t, "rounds 0", s.String())
}
