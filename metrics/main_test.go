package metrics

import (
	"testing"

	"github.com/banterbot/banter/internal/leakcheck"
)

// TestMain fails the package when a goroutine outlives its tests: whatever a
// test starts (simulators, sessions, senders, watchers) its cleanup must stop
// and wait for.
func TestMain(m *testing.M) { leakcheck.Main(m) }
