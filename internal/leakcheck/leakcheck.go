// Package leakcheck fails a test binary when goroutines outlive its tests,
// with go.uber.org/goleak. Tests run in parallel, so the check is made once
// per package, from TestMain, after every test and its cleanups have run.
package leakcheck

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// settle is how long goroutines that are stopping get to end. It is a
// failure guard for a loaded machine (teardown is asynchronous: a closed
// socket's reader notices on its next wake-up), not a timing requirement.
const settle = 15 * time.Second

// known are library goroutines that outlive their owner by the library's
// design, not by a mistake of ours:
//
//   - discordgo v0.29's reconnect loop, waiting out its backoff: when a
//     heartbeat fails (its write errors because the connection is being
//     closed, or an ACK is late on a loaded machine) the heartbeat goroutine
//     calls Close and then reconnect, which retries Open with backoff up to
//     10 minutes and never looks at a later Close. Once the test's simulator
//     is gone every Open fails, and the goroutine sleeps in reconnect's
//     backoff for good, holding nothing of ours. Only that state is ignored
//     (reconnect on top of the stack): a reconnect that got through to a
//     server still running (a simulator a test forgot to close) has listen
//     and heartbeat goroutines of its own, and those are reported.
//   - opencensus's stats worker: go.opencensus.io/stats/view starts it in an
//     init function (google.golang.org/genai links it through
//     cloud.google.com/go/auth), once per process, and never stops it.
var known = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/bwmarrin/discordgo.(*Session).reconnect"),
	goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
}

// Main runs the tests, then fails the binary if goroutines other than the
// ones opts (and the known library ones) ignore are still running once
// settle has passed.
func Main(m *testing.M, opts ...goleak.Option) {
	os.Exit(Check(m.Run(), opts...))
}

// Check is Main's check for a TestMain that has more to do around m.Run
// (start and stop a database server): given m.Run's exit code, it returns
// 1 (after printing them) if goroutines outlive the tests, else code.
// A failed run (code != 0) is returned as it is, unchecked.
func Check(code int, opts ...goleak.Option) int {
	if code != 0 {
		return code
	}
	if err := wait(append(opts, known...), settle); err != nil {
		fmt.Fprintf(os.Stderr, "goroutines outlived the tests: %v\n", err)
		return 1
	}
	return code
}

// Find is the check for one test that owns its goroutines inside a package
// whose other tests may leave theirs (take goleak.IgnoreCurrent() at its
// start and pass it): it returns goleak's finding if goroutines other than
// the ones opts (and the known library ones) ignore are still running once
// within has passed, a failure guard for teardown on a loaded machine.
func Find(within time.Duration, opts ...goleak.Option) error {
	return wait(append(opts, known...), within)
}

// wait polls goleak.Find (which itself retries for about a second) until it
// finds nothing or within has passed, and returns its last finding.
func wait(opts []goleak.Option, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}
