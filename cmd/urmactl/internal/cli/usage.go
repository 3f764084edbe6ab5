package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// A UsageError says that urmactl was called wrongly: an unknown command or
// flag, a wrong number of arguments, a flag value out of its range. The
// command exits 2 for it, as Unix tools do, and 1 for any other error (see
// ExitCode).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usage makes err, unless nil, a UsageError.
func usage(err error) error {
	var ue *UsageError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	return &UsageError{Err: err}
}

// usageArgs makes the errors of an argument check UsageErrors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error { return usage(check(cmd, args)) }
}

// ExitCode is the exit status for the error Execute returned: 0 for none,
// 2 for a UsageError, an ExitError's Code, 1 for any other.
func ExitCode(err error) int {
	var ue *UsageError
	var xe *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &xe):
		return xe.Code
	}
	return 1
}
