package budget

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// newGuard returns a Guard on a fresh SQLite ledger, with budget edited by edit and a clock
// the test moves.
func newGuard(t *testing.T, edit func(b *config.Budget)) (*Guard, *atomic.Pointer[time.Time]) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Default()
	edit(&cfg.Budget)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var now atomic.Pointer[time.Time]
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	now.Store(&start)
	ledger, _ := store.NewSpendLedger(st)
	g := New(Options{Config: func() *config.Config { return cfg }, Ledger: ledger,
		Now: func() time.Time { return *now.Load() }})
	return g, &now
}

// TestGuardLevels: under the soft threshold the model is kept; past it the slot's fallback
// is called; at the guild's cap calls are refused except the slots allowed at the cap, and
// another guild is unaffected; the next budget day starts from nothing.
func TestGuardLevels(t *testing.T) {
	g, now := newGuard(t, func(b *config.Budget) {
		b.GuildDailyUSD, b.SoftThreshold = 1, 0.5
		b.FallbackModels = map[string]string{"llm": "gpt-5-nano"}
		b.ResetHour = 6
	})
	ctx := context.Background()
	reply := llm.Account{Guild: "g1", Slot: "llm"}
	stt := llm.Account{Guild: "g1", Slot: "voice.sttPipeline.transcription"}
	admit := func(a llm.Account) (string, error) { return g.Admit(ctx, a, "gpt-5-mini") }

	g.Spent(ctx, reply, "gpt-5-mini", 0.49)
	if m, err := admit(reply); m != "gpt-5-mini" || err != nil {
		t.Errorf("under the threshold: %q, %v", m, err)
	}
	g.Spent(ctx, reply, "gpt-5-mini", 0.02)
	if m, err := admit(reply); m != "gpt-5-nano" || err != nil {
		t.Errorf("past the threshold: %q, %v; want the fallback", m, err)
	}
	if m, _ := admit(stt); m != "gpt-5-mini" {
		t.Errorf("a slot without fallback past the threshold: %q", m)
	}
	if q, _ := g.Quiet(ctx, "g1", true); q {
		t.Error("quiet before the cap")
	}
	g.Spent(ctx, stt, "gpt-4o-mini-transcribe", 0.5)
	if _, err := admit(reply); !errors.Is(err, llm.ErrSpendCap) {
		t.Errorf("at the cap: %v, want ErrSpendCap", err)
	}
	if _, err := admit(stt); err != nil {
		t.Errorf("transcription (allowed at the cap): %v", err)
	}
	if m, err := admit(llm.Account{Guild: "g2", Slot: "llm"}); m != "gpt-5-mini" || err != nil {
		t.Errorf("another guild: %q, %v", m, err)
	}
	if q, notice := g.Quiet(ctx, "g1", true); !q || notice == "" {
		t.Errorf("first quiet of the day: %v %q, want the notice", q, notice)
	}
	if q, notice := g.Quiet(ctx, "g1", true); !q || notice != "" {
		t.Errorf("second quiet of the day: %v %q, want no notice", q, notice)
	}
	next := time.Date(2026, 11, 28, 5, 59, 0, 0, time.UTC) // before the 06:00 reset: same day
	now.Store(&next)
	if _, err := admit(reply); err == nil {
		t.Error("before the reset hour the cap still holds")
	}
	next = time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	now.Store(&next)
	if m, err := admit(reply); m != "gpt-5-mini" || err != nil {
		t.Errorf("a new budget day: %q, %v", m, err)
	}
}

// TestGuardGlobalCap: the global cap quiets every guild, DMs included.
func TestGuardGlobalCap(t *testing.T) {
	g, _ := newGuard(t, func(b *config.Budget) { b.DailyUSD = 1 })
	ctx := context.Background()
	g.Spent(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m", 0.6)
	g.Spent(ctx, llm.Account{Guild: "g2", Slot: "llm"}, "m", 0.4)
	for _, guild := range []string{"g1", "g3", ""} {
		if _, err := g.Admit(ctx, llm.Account{Guild: guild, Slot: "llm"}, "m"); !errors.Is(err, llm.ErrSpendCap) {
			t.Errorf("guild %q: %v, want ErrSpendCap", guild, err)
		}
	}
}

// TestGuardWithoutCaps: no cap configured admits everything, and still records the spend.
func TestGuardWithoutCaps(t *testing.T) {
	g, _ := newGuard(t, func(*config.Budget) {})
	ctx := context.Background()
	g.Spent(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m", 1e6)
	if m, err := g.Admit(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m"); m != "m" || err != nil {
		t.Errorf("%q, %v", m, err)
	}
	if st := g.State(ctx, "g1"); st.GuildUSD != 1e6 {
		t.Errorf("recorded %v, want 1e6", st.GuildUSD)
	}
}

// TestGuardFollowsReload: the Guard reads budget: at every call, so a reload applies to the
// next one: raising a reached cap lifts the quiet mode at once, lowering it restores it.
func TestGuardFollowsReload(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ledger, _ := store.NewSpendLedger(st)
	var cfg atomic.Pointer[config.Config]
	set := func(guildCap float64) {
		c := config.Default()
		c.Budget.GuildDailyUSD = guildCap
		cfg.Store(c)
	}
	set(1)
	g := New(Options{Config: cfg.Load, Ledger: ledger})
	ctx := context.Background()
	g.Spent(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m", 1)
	if q, _ := g.Quiet(ctx, "g1", false); !q {
		t.Fatal("not quiet at the cap")
	}
	set(5)
	if q, _ := g.Quiet(ctx, "g1", false); q {
		t.Error("still quiet after the cap was raised")
	}
	if _, err := g.Admit(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m"); err != nil {
		t.Errorf("a call after the cap was raised: %v", err)
	}
	set(0.5)
	if q, _ := g.Quiet(ctx, "g1", false); !q {
		t.Error("not quiet after the cap was lowered below the spend")
	}
}

// twoProcesses returns two Guards on one SQLite ledger (two processes, or one restarted),
// with a $1 daily cap a guild and the clock now.
func twoProcesses(t *testing.T, now func() time.Time) []*Guard {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.db")
	cfg := config.Default()
	cfg.Budget.GuildDailyUSD = 1
	var guards []*Guard
	for range 2 {
		st, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		ledger, _ := store.NewSpendLedger(st)
		guards = append(guards, New(Options{Config: func() *config.Config { return cfg }, Ledger: ledger, Now: now}))
	}
	return guards
}

// TestCapNoticeOnceAcrossProcesses: two Guards on one database (two processes, or one
// restarted) say a guild's cap notice once a day between them, however many direct addresses
// ask at once; the next budget day it is said again, once.
func TestCapNoticeOnceAcrossProcesses(t *testing.T) {
	day := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	now.Store(&day)
	guards := twoProcesses(t, func() time.Time { return *now.Load() })
	ctx := context.Background()
	notices := func() int {
		var mu sync.Mutex
		var wg sync.WaitGroup
		n := 0
		for i := range 20 {
			wg.Go(func() {
				quiet, notice := guards[i%2].Quiet(ctx, "g1", true)
				if !quiet {
					t.Error("not quiet at the cap")
				}
				if notice != "" {
					mu.Lock()
					n++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return n
	}
	guards[0].Spent(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m", 1)
	if n := notices(); n != 1 {
		t.Errorf("%d cap notices from two processes, want 1", n)
	}
	next := day.Add(24 * time.Hour)
	now.Store(&next)
	guards[1].Spent(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m", 1)
	if n := notices(); n != 1 {
		t.Errorf("%d cap notices the next day, want 1", n)
	}
}

// TestCapNoticeGivenBack: a notice claimed by one process and not sent (NoticeNotSent) is
// said by the next direct address, in the other process, and then by no one that day.
func TestCapNoticeGivenBack(t *testing.T) {
	guards := twoProcesses(t, func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) })
	ctx := context.Background()
	guards[0].Spent(ctx, llm.Account{Guild: "g1", Slot: "llm"}, "m", 1)
	said := func(g *Guard) bool {
		_, notice := g.Quiet(ctx, "g1", true)
		return notice != ""
	}
	if !said(guards[0]) {
		t.Fatal("no first notice")
	}
	if said(guards[1]) {
		t.Fatal("the other process says the claimed notice")
	}
	guards[0].NoticeNotSent(ctx, "g1")
	if !said(guards[1]) {
		t.Fatal("the notice given back is not said by the next address")
	}
	if said(guards[0]) || said(guards[1]) {
		t.Error("the notice is said again after it was sent")
	}
}

// TestPruneKeepsDays: Prune deletes the ledger's days before the last keepDays budget days
// (the current one included), and nothing with keepDays 0.
func TestPruneKeepsDays(t *testing.T) {
	keep := 3
	g, _ := newGuard(t, func(b *config.Budget) { b.KeepDays = keep })
	ctx := context.Background()
	for _, day := range []string{"2025-01-01", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27"} {
		if err := g.opts.Ledger.AddSpend(ctx, day, "g1", "llm", 1); err != nil {
			t.Fatal(err)
		}
	}
	n, err := g.Prune(ctx) // today is 2026-11-27: keeps 25, 26, 27
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want the 2 days before 2026-11-25", n, err)
	}
	for day, want := range map[string]float64{"2025-01-01": 0, "2026-11-24": 0, "2026-11-25": 1, "2026-11-27": 1} {
		if got, _, _ := g.opts.Ledger.SpendTotals(ctx, day, "g1"); got != want {
			t.Errorf("%s after the prune: %v, want %v", day, got, want)
		}
	}
	g.opts.Config().Budget.KeepDays = 0
	if err := g.opts.Ledger.AddSpend(ctx, "2020-01-01", "g1", "llm", 1); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Prune(ctx); n != 0 || err != nil {
		t.Errorf("keepDays 0 pruned %d, %v; want nothing", n, err)
	}
}
