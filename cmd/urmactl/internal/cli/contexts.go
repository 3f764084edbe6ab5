package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urma-go/sdk/internal/termsafe"
	"github.com/urma-go/sdk/provider/loopback"
)

// DefaultInspectTimeout is how long segment ls and jetty ls wait for each
// loopback context to answer: a live context answers in microseconds, so
// only a stopped or wedged process runs into it.
const DefaultInspectTimeout = 2 * time.Second

// InspectOptions selects the loopback contexts that segment ls and jetty ls
// list. The zero value asks every context of loopback.RuntimeDir() with
// DefaultInspectTimeout and warns on os.Stderr.
type InspectOptions struct {
	// Dir is the loopback runtime directory; "" means loopback.RuntimeDir(),
	// which honours $URMA_LOOPBACK_DIR. Unlike the default directory, which
	// does not exist until a context is opened, an explicit Dir must exist,
	// so that a mistyped path is not mistaken for an idle host. A relative
	// Dir is taken from the working directory, as any path argument is.
	// Either is refused unless it passes the checks urma.Open applies
	// (see loopback.Inspect).
	Dir string
	// Timeout bounds the wait for each context; zero means DefaultInspectTimeout.
	Timeout time.Duration
	// Warn receives one line per context that did not answer; nil means os.Stderr.
	Warn io.Writer
}

// inspect asks every loopback context of opts.Dir for its objects and
// returns the contexts that answered. The others are reported to opts.Warn
// and skipped: one hung process must not hide the rest of the host.
func inspect(opts InspectOptions) ([]loopback.ContextInfo, error) {
	return inspectBy(opts, loopback.Inspect)
}

// inspectBy is inspect with list asking the contexts (loopback.Inspect or
// loopback.InspectStats).
func inspectBy(opts InspectOptions, list func(string, time.Duration) ([]loopback.ContextInfo, error)) ([]loopback.ContextInfo, error) {
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("invalid timeout %v (want > 0)", opts.Timeout)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultInspectTimeout
	}
	if opts.Dir != "" {
		abs, err := filepath.Abs(opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("loopback runtime directory: %w", err)
		}
		opts.Dir = abs
		fi, err := os.Stat(opts.Dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("loopback runtime directory %s does not exist", opts.Dir)
			}
			return nil, fmt.Errorf("loopback runtime directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("loopback runtime directory %s is not a directory", opts.Dir)
		}
	}
	warn := opts.Warn
	if warn == nil {
		warn = os.Stderr
	}
	all, err := list(opts.Dir, timeout)
	if err != nil {
		return nil, err
	}
	live := all[:0]
	for _, ci := range all {
		if ci.Error != "" {
			fmt.Fprintf(warn, "urmactl: warning: a loopback context did not answer: %s\n", safe(ci.Error))
			continue
		}
		live = append(live, ci)
	}
	return live, nil
}

// processName returns the command name of pid for wide listings, or "-"
// where /proc is missing or the process is gone: the name only helps a
// person tell processes apart, so it is never worth failing for. A process
// names itself (prctl), so the name is printed through safe too.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "-"
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return safe(s)
	}
	return "-"
}

// safe is how every string that another process supplied (a context's
// LIST reply, a perf server's error, a process name) or that a provider
// read from the system (device names) is printed in text and tables:
// with the characters a terminal would act on, or that would forge rows
// and columns, escaped. JSON output escapes them in writeJSON.
func safe(s string) string { return termsafe.String(s) }
