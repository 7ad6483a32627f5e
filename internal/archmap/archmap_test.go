package archmap

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is the module path `go list` prefixes every package with.
const module = "github.com/banterbot/banter"

// TestTableMatchesPackages fails when a package of the module is missing from the table, or
// the table names one that no longer exists.
func TestTableMatchesPackages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table, err := tablePackages(bufio.NewScanner(f))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-e", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var listed []string
	for _, p := range strings.Fields(string(out)) {
		listed = append(listed, strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
	}
	if len(listed) < 50 {
		t.Fatalf("go list gave %d packages under %s: not the module root?", len(listed), root)
	}
	for _, p := range missing(listed, table) {
		t.Errorf("package %s is not in docs/ARCHITECTURE.md's package table", p)
	}
	for _, p := range missing(table, listed) {
		t.Errorf("docs/ARCHITECTURE.md's package table names %s, which is not a package of the module", p)
	}
}

// TestTablePackagesReadsRows: the parser takes the first cell of each row of the "Packages"
// section (one or more backquoted paths), and nothing from other sections or the header.
func TestTablePackagesReadsRows(t *testing.T) {
	doc := "## Layers\n\n| `not/this` | x |\n\n## Packages\n\n| package | holds | docs |\n|---|---|---|\n" +
		"| `text` | the text `pipeline` | text.md |\n| `audio/opus`, `audio/wav` | sound | audio.md |\n\n## Decisions\n\n| `nor/this` | y |\n"
	got, err := tablePackages(bufio.NewScanner(strings.NewReader(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"text", "audio/opus", "audio/wav"}; !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	if m := missing([]string{"text", "voice"}, got); !slices.Equal(m, []string{"voice"}) {
		t.Errorf("missing = %q, want [voice]", m)
	}
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// tablePackages returns the package paths named in the first cell of the rows of the section
// titled "## Packages".
func tablePackages(sc *bufio.Scanner) ([]string, error) {
	var out []string
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line[3:]) == "Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
	}
	return out, sc.Err()
}

// missing returns the members of want that have lacks, in want's order.
func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}
