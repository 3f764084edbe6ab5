package exutil

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Interruptible returns a context cancelled by Ctrl-C (SIGINT) or SIGTERM,
// so that a program can unwind and free its resources instead of dying.
func Interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
