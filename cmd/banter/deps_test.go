package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// thirdPartyTesting are the modules' packages allowed to bring the testing package into the
// binary, each with its reason. google.golang.org/genai (Google's Gemini SDK, the chosen Live
// client) keeps its request-replay helpers in its main package, which imports testing and
// net/http/httptest; nothing of ours calls them, and testing registers its flags only in
// testing.Init, which only a test binary calls.
var thirdPartyTesting = []string{"google.golang.org/genai"}

// TestBinaryDoesNotLinkTesting keeps the production binary lean: the simulators it embeds
// (banter sim, banter sandbox) keep their testing.TB helpers in separate packages (simtest,
// openaitest, voicetest) that only tests import, and no package of ours imports testing or
// httptest outside its tests. A third-party package that imports testing is allowed only when
// listed in thirdPartyTesting.
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list -deps listed only %d packages: %q", len(lines), lines)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if strings.HasSuffix(pkg, "/simtest") || strings.HasSuffix(pkg, "/openaitest") || strings.HasSuffix(pkg, "/voicetest") {
			t.Errorf("cmd/banter links %s; test helpers must stay out of the production binary", pkg)
		}
		if strings.HasPrefix(pkg, "testing") || pkg == "net/http/httptest" || !strings.Contains(strings.Split(pkg, "/")[0], ".") {
			continue // the standard library
		}
		for _, imp := range imports {
			if imp != "testing" && !strings.HasPrefix(imp, "testing/") && imp != "net/http/httptest" {
				continue
			}
			if strings.HasPrefix(pkg, "github.com/banterbot/banter") || !slices.Contains(thirdPartyTesting, pkg) {
				t.Errorf("%s imports %s into the production binary", pkg, imp)
			}
		}
	}
}
