package provider

import (
	"context"
	"errors"
	"fmt"
)

// ContextErr returns ctx's error as the SDK reports it, or nil while ctx
// is not done: the one convention of every blocking call. A deadline
// matches both context.DeadlineExceeded and ErrTimeout under errors.Is; a
// cancel matches context.Canceled; a cause given to context.WithCancelCause
// or WithDeadlineCause is kept as well.
func ContextErr(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		if cause != nil && cause != err {
			return fmt.Errorf("%w (%w): %w", err, cause, ErrTimeout)
		}
		return fmt.Errorf("%w: %w", err, ErrTimeout)
	}
	if cause != nil && cause != err {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}
