package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/leakcheck"
	"github.com/banterbot/banter/store/pgtest"
)

// pgCluster is the package's throwaway PostgreSQL server, started once by TestMain; nil when
// the server binaries are missing (then the postgres subtests skip, unless
// BANTER_REQUIRE_POSTGRES=1, as `make test` sets, makes that a failure).
var pgCluster *pgtest.Cluster

func TestMain(m *testing.M) {
	c, err := pgtest.Start(context.Background())
	switch {
	case err == nil:
		pgCluster = c
	case errors.Is(err, pgtest.ErrNoServer) && os.Getenv("BANTER_REQUIRE_POSTGRES") == "":
		fmt.Fprintln(os.Stderr, "store: postgres tests skipped:", err)
	default:
		fmt.Fprintln(os.Stderr, "store: cannot start the test PostgreSQL:", err)
		os.Exit(1)
	}
	code := m.Run()
	if pgCluster != nil {
		if err := pgCluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(leakcheck.Check(code))
}

// openPostgres opens a Postgres store on a fresh database of the test cluster.
func openPostgres(t *testing.T) (*Postgres, string) {
	t.Helper()
	if pgCluster == nil {
		t.Skip("no PostgreSQL server binaries (install postgresql, or run make test)")
	}
	ctx := context.Background()
	dsn, err := pgCluster.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenPostgres(ctx, dsn, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

// forEachDriver runs test against a fresh store of every driver.
func forEachDriver(t *testing.T, test func(t *testing.T, s Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTemp(t)
		test(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		s, _ := openPostgres(t)
		test(t, s)
	})
}

func TestOpenDriver(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDriver(ctx, "sqlite", filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*SQLite); !ok {
		t.Errorf("sqlite driver opened %T", s)
	}
	s.Close()
	if _, err := OpenDriver(ctx, "mysql", "x"); err == nil || !strings.Contains(err.Error(), "sqlite or postgres") {
		t.Errorf("unknown driver: %v", err)
	}
	if pgCluster == nil {
		return
	}
	dsn, err := pgCluster.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenDriver(ctx, "postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, ok := p.(*Postgres); !ok {
		t.Errorf("postgres driver opened %T", p)
	}
}

// TestPostgresMigrations: a new database gets the whole schema; reopening runs nothing twice
// and keeps rows; a database migrated by a newer banter is refused.
func TestPostgresMigrations(t *testing.T) {
	ctx := context.Background()
	s, dsn := openPostgres(t)
	if v, err := s.SchemaVersion(ctx); err != nil || v != len(pgMigrations()) {
		t.Fatalf("schema version = %d, %v; want %d", v, err, len(pgMigrations()))
	}
	if err := s.SaveMessage(ctx, Message{ID: "1", ChannelID: "c", AuthorID: "u", Content: "kept", IsSelf: true, Persona: "pirate"}); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenPostgres(ctx, dsn, PostgresOptions{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if m, err := s2.Message(ctx, "1"); err != nil || m.Content != "kept" || m.Persona != "pirate" || !m.IsSelf {
		t.Errorf("after reopen: %+v, %v", m, err)
	}
	if _, err := s2.pool.Exec(ctx, `UPDATE schema_version SET version=99`); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	_, err = OpenPostgres(ctx, dsn, PostgresOptions{})
	if err == nil || !strings.Contains(err.Error(), "upgrade banter") {
		t.Errorf("newer schema: err = %v, want a refusal saying to upgrade", err)
	}
}

// TestPostgresConcurrentStarts: processes starting together against one new database (a
// rolling deploy of several shards) migrate it exactly once and all come up.
func TestPostgresConcurrentStarts(t *testing.T) {
	if pgCluster == nil {
		t.Skip("no PostgreSQL server binaries")
	}
	ctx := context.Background()
	dsn, err := pgCluster.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	stores := make([]*Postgres, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = OpenPostgres(ctx, dsn, PostgresOptions{MaxConns: 2}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	// Every process sees the others' writes: one ledger shared by all.
	for i, s := range stores {
		if err := s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: fmt.Sprint("u", i), Kind: PromptExplicit, At: fixedNow.Add(-1)}); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	counts, err := stores[0].CountPrompts(ctx, "c1", fixedNow.Add(-ledgerWindow))
	if err != nil || counts[PromptExplicit] != n {
		t.Errorf("shared ledger = %v, %v; want %d explicit", counts, err, n)
	}
}

// TestPostgresErrorsHidePassword: neither a malformed DSN nor an unreachable server puts the
// password in the error, and both name what to fix.
func TestPostgresErrorsHidePassword(t *testing.T) {
	ctx := context.Background()
	const secret = "s3cretPW"
	cases := []struct{ name, dsn, want string }{
		{"malformed", "postgres://banter:" + secret + "@db:notaport/banter", "store.dsn"},
		{"unreachable", "postgres://banter:" + secret + "@127.0.0.1:1/banter?connect_timeout=5", "127.0.0.1:1"},
		{"empty", "", "store.dsn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenPostgres(ctx, c.dsn, PostgresOptions{})
			if err == nil {
				t.Fatal("opened")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the password: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
		})
	}
}

// fixedNow is the time the driver-independent ledger tests record at.
var fixedNow = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// TestPostgresIdentifyGate: two processes sharing the database identify one key one at a time:
// the second waits until the first has released (and the spacing has passed); another key is
// free at once.
func TestPostgresIdentifyGate(t *testing.T) {
	ctx := context.Background()
	a, dsn := openPostgres(t)
	b, err := OpenPostgres(ctx, dsn, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const spacing = 10 * time.Millisecond
	releaseA, err := a.AcquireIdentify(ctx, 0, spacing)
	if err != nil {
		t.Fatal(err)
	}
	releaseOther, err := b.AcquireIdentify(ctx, 1, spacing) // would block forever if keys were shared
	if err != nil {
		t.Fatal(err)
	}
	releaseOther()
	events := make(chan string, 2)
	go func() {
		r, err := b.AcquireIdentify(ctx, 0, spacing)
		if err != nil {
			events <- "error: " + err.Error()
			return
		}
		events <- "b acquired"
		r()
	}()
	events <- "a released"
	releaseA()
	if first, second := <-events, <-events; first != "a released" || second != "b acquired" {
		t.Errorf("order = %q, %q", first, second)
	}
	// A release books the key's next identify a spacing later (by the database's clock).
	r, err := a.AcquireIdentify(ctx, 5, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r()
	var ahead bool
	if err := a.pool.QueryRow(ctx, `SELECT next_at > now() + interval '59 minutes' FROM identify_slots WHERE key=5`).Scan(&ahead); err != nil || !ahead {
		t.Errorf("after a release with an hour's spacing, the next identify is not an hour away (%v)", err)
	}
}

// TestPostgresIdentifyGateBooksFromRelease: the next identify of a key is booked a spacing after
// the release (when the Identify was sent), by the database's clock at that moment, not from
// when the holder began waiting for the key: a process that waited for another's identify must
// not let a third identify at once after its own.
func TestPostgresIdentifyGateBooksFromRelease(t *testing.T) {
	ctx := context.Background()
	a, _ := openPostgres(t)
	release, err := a.AcquireIdentify(ctx, 7, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var held time.Time // the database's clock while the key is held, before the release
	if err := a.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	release()
	var booked bool
	if err := a.pool.QueryRow(ctx, `SELECT next_at >= $1::timestamptz + interval '1 hour' FROM identify_slots WHERE key=7`, held).Scan(&booked); err != nil {
		t.Fatal(err)
	}
	if !booked {
		t.Error("the next identify was booked from before the release (the transaction's start), not a spacing after it")
	}
}

// TestPostgresPoolSizeFromDSN: the connection pool's size is set in store.dsn (pgx's
// pool_max_conns), as docs/scaling.md tells operators sizing max_connections for N processes.
func TestPostgresPoolSizeFromDSN(t *testing.T) {
	_, dsn := openPostgres(t)
	s, err := OpenPostgres(context.Background(), dsn+"&pool_max_conns=3", PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.pool.Config().MaxConns; got != 3 {
		t.Errorf("pool size %d, want the DSN's pool_max_conns=3", got)
	}
}

// TestRequestBudgetSharedAcrossProcesses: two stores on one database (two processes' worth,
// each its own connection pool) reserve a provider's slots at once, 20 goroutines each. They
// share the budget: together they are granted exactly the slots within the wait (0 h … 10 h
// away at an hour apart: 11), each once. Separate budgets would grant 11 each.
func TestRequestBudgetSharedAcrossProcesses(t *testing.T) {
	a, dsn := openPostgres(t)
	ctx := context.Background()
	b, err := OpenPostgres(ctx, dsn, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const interval, maxWait = time.Hour, 10*time.Hour + 30*time.Minute
	var mu sync.Mutex
	granted := map[time.Duration]int{} // by wait, to the nearest minute
	var wg sync.WaitGroup
	for _, st := range []*Postgres{a, b} {
		budget := NewRequestBudget(st, "openai", interval)
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wait, ok, err := budget.Reserve(ctx, maxWait)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					granted[wait.Round(time.Minute)]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	total := 0
	for h := range 11 {
		if n := granted[time.Duration(h)*time.Hour]; n != 1 {
			t.Errorf("slot %d h away granted %d times, want once", h, n)
		}
	}
	for _, n := range granted {
		total += n
	}
	if total != 11 {
		t.Errorf("%d reservations granted by the two processes together (%v), want 11", total, granted)
	}
}
