package codesize

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	maxFileLines = 600
	maxFuncLines = 100
)

// TestSourceSizes walks the module's Go files and reports every file over
// maxFileLines and every function (declared or literal) over maxFuncLines
// outside _test.go files and bench/.
func TestSourceSizes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	problems, files, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files under %s: not the module root?", files, root)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsOversized proves the check sees what it must refuse.
func TestCheckFindsOversized(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	long.WriteString("package x\n\nfunc long() {\n")
	for range maxFuncLines {
		long.WriteString("\t_ = 1\n")
	}
	long.WriteString("}\n")
	var big strings.Builder
	big.WriteString("package x\n")
	for range maxFileLines {
		big.WriteString("// filler\n")
	}
	write := func(name, text string) {
		t.Helper()
		if err := writeFile(filepath.Join(dir, name), text); err != nil {
			t.Fatal(err)
		}
	}
	write("long.go", long.String())
	write("big.go", big.String())
	write("long_test.go", strings.Replace(long.String(), "func long", "func longTest", 1))
	write("bench/long.go", long.String())
	problems, _, err := check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 {
		t.Fatalf("want the long function and the big file, got %d problems: %q", len(problems), problems)
	}
}

// check returns the size problems of the Go files under root and how many
// files it read.
func check(root string) (problems []string, files int, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch name := d.Name(); {
			case name == "node_modules", name == "testdata", rel != "." && strings.HasPrefix(name, "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("codesize: %w", err)
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			problems = append(problems, fmt.Sprintf("%s: %d lines (at most %d: split it by what it does)", rel, n, maxFileLines))
		}
		if strings.HasSuffix(path, "_test.go") || rel == "bench" || strings.HasPrefix(rel, "bench"+string(filepath.Separator)) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var name string
			switch x := n.(type) {
			case *ast.FuncDecl:
				name = x.Name.Name
			case *ast.FuncLit:
				name = "func literal"
			default:
				return true
			}
			start, end := fset.Position(n.Pos()), fset.Position(n.End())
			if lines := end.Line - start.Line + 1; lines > maxFuncLines {
				problems = append(problems, fmt.Sprintf("%s:%d: %s is %d lines (at most %d outside tests and bench/)", rel, start.Line, name, lines, maxFuncLines))
			}
			return true
		})
		return nil
	})
	return problems, files, err
}

func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
