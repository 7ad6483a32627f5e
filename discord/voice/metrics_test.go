package voice

import (
	"testing"
	"time"
)

// TestSendLateness: the one late-frame metric reads at both thresholds the
// project uses, the transport's 2 ms and the voice service's 5 ms, and
// counts skipped slots beside it.
func TestSendLateness(t *testing.T) {
	m := newMetrics()
	for _, late := range []time.Duration{0, 1500 * time.Microsecond, 2 * time.Millisecond, 3 * time.Millisecond,
		5 * time.Millisecond, 7 * time.Millisecond, 40 * time.Millisecond} {
		m.sent(0, late)
	}
	m.sent(2, -time.Millisecond) // a clock that woke early counts as on time
	if n := value(m.packetsOut); n != 8 {
		t.Fatalf("packets out %v, want 8", n)
	}
	if n := lateOver(m, 0.002); n != 4 {
		t.Errorf("late > 2 ms: %v, want 4 (3, 5, 7, 40 ms)", n)
	}
	if n := lateOver(m, 0.005); n != 2 {
		t.Errorf("late > 5 ms: %v, want 2 (7, 40 ms)", n)
	}
	if n := value(m.sendSkipped); n != 2 {
		t.Errorf("skipped %v, want 2", n)
	}
	var nilM *Metrics
	nilM.sent(1, time.Second) // records nothing, does not panic
}
