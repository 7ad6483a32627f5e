package leakcheck

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestWait(t *testing.T) {
	ignore := goleak.IgnoreCurrent()

	stuck := make(chan struct{})
	defer close(stuck)
	go blockUntil(stuck)
	if err := wait([]goleak.Option{ignore}, 0); err == nil || !strings.Contains(err.Error(), "leakcheck.blockUntil") {
		t.Errorf("wait = %v, want the goroutine that never ends reported", err)
	}

	ignore = goleak.IgnoreCurrent()
	stopping := make(chan struct{})
	go blockUntil(stopping)
	close(stopping) // it ends at some point after this: not a leak
	if err := wait([]goleak.Option{ignore}, time.Minute); err != nil {
		t.Errorf("wait reported a goroutine that ended: %v", err)
	}
}

func blockUntil(stop <-chan struct{}) { <-stop }
