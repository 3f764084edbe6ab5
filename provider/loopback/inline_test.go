package loopback_test

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// The small functions the data path calls once or more per request stay
// small enough for the compiler to inline: their comments say so, and a
// call each would cost every post and poll its overhead (bench/instructions
// counts it). A change that grows one past the inlining budget fails here,
// by name, instead of showing up as a slower benchmark.
func TestHotPathsInline(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the packages for the compiler's inlining report")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command here to compile with")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m",
		".", "./internal/shm", "./internal/inbox", "./internal/sg", "../internal/wrcheck").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, fn := range []string{
		// loopback
		"(*sendq).full", "(*queueLock).TryLockOwner", "(*queueLock).UnlockOwner", "(*rqView).ready",
		"(*jfc).sweepDue", "(*memRef).pin", "(*memRef).span", "(*lbContext).segByHandle", "(*segment).noteReceive",
		"(*rqView).noteTaken",
		// shm
		"(*Ring).Seq", "(*Ring).Payload", "(*Ring).Publish", "(*Ring).Release", "StoreRelease",
		// sg
		"(*Span).Remote", "(*List).Len", "(*List).At", "(*List).Next", "(*List).Grow", "(*List).Reset",
		"(*List).Add", "(*List).Only", "(*List).AddBytes", "(*List).Release", "(*List).Total", "(*List).HasRemote",
		// inbox
		"(*Inbox).Head", "(*Inbox).Consume", "(*Inbox).Waiting", "(*Inbox).TryLock", "(*Inbox).Bump",
		"(*Inbox).Held", "(*Route).Skips", "(*Route).Fail",
		// wrcheck
		"Inside",
	} {
		re := regexp.MustCompile(`(?m): can inline ` + regexp.QuoteMeta(fn) + `( |$)`)
		if !re.Match(out) {
			t.Errorf("%s no longer inlines", fn)
		}
	}
}
