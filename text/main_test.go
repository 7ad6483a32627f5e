package text_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run when a goroutine of the text pipeline outlives the tests: every
// harness shuts its Service down, and Shutdown must have stopped and waited for all of them.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := serviceGoroutines(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "text: goroutines left after every Service shut down:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// serviceGoroutines waits up to d for the Service's goroutines to end and returns the stacks
// of those still running.
func serviceGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "banter/text.(*Service)") {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
