package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryDoesNotLinkTesting keeps the production binary lean: the
// simulators it embeds (banter sim, banter sandbox) keep their testing.TB
// helpers in separate packages (simtest, openaitest, voicetest) that only
// tests import.
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		if d == "testing" || strings.HasPrefix(d, "testing/") || strings.HasSuffix(d, "/simtest") ||
			strings.HasSuffix(d, "/openaitest") || strings.HasSuffix(d, "/voicetest") {
			t.Errorf("cmd/banter links %s; test helpers must stay out of the production binary", d)
		}
	}
}
