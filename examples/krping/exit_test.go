package main

import (
	"errors"
	"os/exec"
)

// exitCode is a finished program's exit status (0 for a nil error, -1 when
// it did not exit normally).
func exitCode(err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
