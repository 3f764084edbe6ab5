//go:build race

package extest

const raceEnabled = true
