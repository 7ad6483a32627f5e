// Package prometheus holds banter's Prometheus alert rules (alerts.yml) and their unit tests
// (alerts_test.yml); this Go test runs promtool over them in `make test`.
package prometheus

import (
	"os/exec"
	"strings"
	"testing"
)

// promtool returns the path of promtool or fails the test saying how to get it (`make
// test-deps` installs Debian's prometheus package, which ships it).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (%v): run `make test-deps` or `apt-get install prometheus`", err)
	}
	return p
}

// TestAlertRulesCheck: alerts.yml is valid (syntax, PromQL, templates) for promtool.
func TestAlertRulesCheck(t *testing.T) {
	out, err := exec.Command(promtool(t), "check", "rules", "alerts.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool check rules did not report success:\n%s", out)
	}
}

// TestAlertRulesUnit runs alerts_test.yml: each alert fires on the series it is meant for,
// with its labels and runbook annotations, and stays quiet on the ones it must ignore.
func TestAlertRulesUnit(t *testing.T) {
	out, err := exec.Command(promtool(t), "test", "rules", "alerts_test.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool test rules did not report success:\n%s", out)
	}
}
