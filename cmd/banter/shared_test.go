package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/store/pgtest"
)

// sharedSetup is the expensive setup the package's tests share, made once on first use and
// removed by TestMain: the banter binary (`go build`, several seconds even with a warm cache)
// and a throwaway PostgreSQL server (each test still gets a fresh, empty database of its own).
type sharedSetup struct {
	binOnce sync.Once
	binDir  string
	bin     string
	binErr  error

	pgOnce sync.Once
	pg     *pgtest.Cluster
	pgErr  error
}

// shared is the one sharedSetup of the test binary: tests only read what its sync.Onces made.
var shared sharedSetup

func TestMain(m *testing.M) {
	flag.Parse()
	if !flagSet("test.parallel") {
		// See "Parallel tests" below: they wait, they do not compute.
		if err := flag.Set("test.parallel", strconv.Itoa(endToEndParallel)); err != nil {
			fmt.Fprintln(os.Stderr, "set -test.parallel:", err)
			os.Exit(2)
		}
	}
	code := m.Run()
	shared.close()
	os.Exit(code)
}

// endToEndParallel is how many parallel tests run at once when -parallel is not given: more
// than go test's default (GOMAXPROCS, 2 on the CI machine), which suits tests that compute,
// since these mostly wait on simulators and real-time audio (see "Parallel tests" below).
const endToEndParallel = 6

// flagSet reports whether the flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// banterBinary returns the banter binary built from this package, building it on first use.
func banterBinary(t *testing.T) string {
	t.Helper()
	s := &shared
	s.binOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if s.binDir, s.binErr = os.MkdirTemp("", "banter-bin-"); s.binErr != nil {
			return
		}
		path := filepath.Join(s.binDir, "banter")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", path, ".").CombinedOutput(); err != nil {
			s.binErr = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		s.bin = path
	})
	if s.binErr != nil {
		t.Fatal(s.binErr)
	}
	return s.bin
}

// sharedDatabase returns the DSN of a fresh, empty database on the package's PostgreSQL
// server, starting the server on first use. Without the server binaries the test is skipped,
// unless BANTER_REQUIRE_POSTGRES is set (make test sets it): then it fails (as pgtest.Database).
func sharedDatabase(ctx context.Context, t *testing.T) string {
	t.Helper()
	s := &shared
	s.pgOnce.Do(func() {
		// The server outlives the test that starts it: its start is bounded on its own.
		startCtx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		s.pg, s.pgErr = pgtest.Start(startCtx)
	})
	if errors.Is(s.pgErr, pgtest.ErrNoServer) && os.Getenv("BANTER_REQUIRE_POSTGRES") == "" {
		t.Skip(s.pgErr)
	}
	if s.pgErr != nil {
		t.Fatal(s.pgErr)
	}
	dsn, err := s.pg.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// close stops the server and removes the binary, whichever were made.
func (s *sharedSetup) close() {
	if s.pg != nil {
		if err := s.pg.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "shared PostgreSQL:", err)
		}
	}
	if s.binDir != "" {
		os.RemoveAll(s.binDir)
	}
}

// Parallel tests: the end-to-end tests that call t.Parallel run `banter run` (in this process,
// or as processes of the shared binary) against simulators of their own: their own ports,
// folders, config files and stores (SQLite files, or a fresh database of the shared PostgreSQL);
// no environment variables of the test process, no working-folder change, no signals to it, no
// process-wide check such as the fault matrix's goroutine leak check (it runs while they are
// paused). They spend nearly all their time waiting on the simulators and real-time audio (a
// voice case uses about 7 % of a core, a three-process cluster test well under half a core, its
// build aside). They run after the sequential tests, at most -parallel (endToEndParallel unless
// given) at a time. Tests whose assertions depend on the timing of the audio the member hears (the
// pause sweep, turn taking) and the tests that change the working folder (t.Chdir: the
// playground's) stay sequential.
