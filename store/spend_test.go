package store

import (
	"context"
	"math"
	"sync"
	"testing"
)

func TestSpendLedger(t *testing.T) { forEachDriver(t, testSpendLedger) }

// testSpendLedger: additions to the same row add up, also when concurrent (each one atomic);
// totals separate the guild from every guild, and days from each other.
func testSpendLedger(t *testing.T, s Store) {
	ctx := context.Background()
	l, ok := NewSpendLedger(s)
	if !ok {
		t.Fatalf("%T keeps no spend ledger", s)
	}
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if err := l.AddSpend(ctx, "2026-11-27", "g1", "llm", 0.25); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.AddSpend(ctx, "2026-11-27", "g1", "voice.sttPipeline.tts", 1.5))
	must(l.AddSpend(ctx, "2026-11-27", "g2", "llm", 2))
	must(l.AddSpend(ctx, "2026-11-27", "", "llm", 0.5))
	must(l.AddSpend(ctx, "2026-11-26", "g1", "llm", 100))

	g, all, err := l.SpendTotals(ctx, "2026-11-27", "g1")
	must(err)
	if math.Abs(g-11.5) > 1e-9 || math.Abs(all-14) > 1e-9 {
		t.Errorf("totals of g1 = %v, all %v; want 11.5 (40 × 0.25 + 1.5) and 14", g, all)
	}
	if g, _, _ := l.SpendTotals(ctx, "2026-11-28", "g1"); g != 0 {
		t.Errorf("a day without spend: %v", g)
	}
	rows, err := l.DaySpend(ctx, "2026-11-27")
	must(err)
	want := []Spend{{"", "llm", 0.5}, {"g1", "llm", 10}, {"g1", "voice.sttPipeline.tts", 1.5}, {"g2", "llm", 2}}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i].Guild != want[i].Guild || rows[i].Slot != want[i].Slot || math.Abs(rows[i].USD-want[i].USD) > 1e-9 {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}

// TestCapNoticeClaimedOnce: the day's cap notice of a guild is claimed once among two
// handles on one database (two processes), however many claim it together; another guild
// or another day is a claim of its own.
func TestCapNoticeClaimedOnce(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		a, path := openTemp(t)
		b, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		testCapNoticeClaimedOnce(t, a, b)
	})
	t.Run("postgres", func(t *testing.T) {
		a, dsn := openPostgres(t)
		b, err := OpenPostgres(context.Background(), dsn, PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		testCapNoticeClaimedOnce(t, a, b)
	})
}

func testCapNoticeClaimedOnce(t *testing.T, stores ...Store) {
	ctx := context.Background()
	var ledgers []SpendLedger
	for _, s := range stores {
		l, ok := NewSpendLedger(s)
		if !ok {
			t.Fatalf("%T keeps no spend ledger", s)
		}
		ledgers = append(ledgers, l)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	claimed := 0
	for i := range 40 {
		wg.Go(func() {
			ok, err := ledgers[i%len(ledgers)].ClaimCapNotice(ctx, "2026-11-27", "g1")
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				claimed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if claimed != 1 {
		t.Errorf("the cap notice of g1 on 2026-11-27 claimed %d times by 40 concurrent claims, want once", claimed)
	}
	for _, c := range []struct{ day, guild string }{{"2026-11-27", "g2"}, {"2026-11-28", "g1"}, {"2026-11-27", ""}} {
		if ok, err := ledgers[1].ClaimCapNotice(ctx, c.day, c.guild); !ok || err != nil {
			t.Errorf("first claim of %q on %s: %v, %v; want claimed", c.guild, c.day, ok, err)
		}
	}
	// a claim given back (its notice not sent) is won by the next claim, in either process,
	// and only by it; other days' and guilds' claims stay
	if err := ledgers[0].ReleaseCapNotice(ctx, "2026-11-27", "g1"); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if ok, err := ledgers[1-i%len(ledgers)].ClaimCapNotice(ctx, "2026-11-27", "g1"); ok != want || err != nil {
			t.Errorf("claim %d after the release: %v, %v; want %v", i+1, ok, err, want)
		}
	}
	if ok, _ := ledgers[0].ClaimCapNotice(ctx, "2026-11-28", "g1"); ok {
		t.Error("the release of 2026-11-27 freed the claim of 2026-11-28")
	}
}

func TestPruneSpend(t *testing.T) { forEachDriver(t, testPruneSpend) }

// testPruneSpend: the spend and cap-notice claims of the days before the bound go; that
// day's and later stay.
func testPruneSpend(t *testing.T, s Store) {
	ctx := context.Background()
	l, _ := NewSpendLedger(s)
	days := []string{"2025-10-23", "2026-11-25", "2026-11-26", "2026-11-27"}
	for _, day := range days {
		for _, g := range []string{"g1", "g2"} {
			if err := l.AddSpend(ctx, day, g, "llm", 1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.ClaimCapNotice(ctx, day, "g1"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := l.PruneSpend(ctx, "2026-11-26")
	if err != nil || n != 4 {
		t.Fatalf("pruned %d rows, %v; want the 4 of the two days before 2026-11-26", n, err)
	}
	for _, day := range days {
		kept := day >= "2026-11-26"
		_, all, err := l.SpendTotals(ctx, day, "g1")
		if err != nil || (all == 2) != kept || (all == 0) == kept {
			t.Errorf("spend of %s after the prune: %v, %v; want kept=%v", day, all, err, kept)
		}
		// A pruned day's claim is gone: claiming it again succeeds.
		again, err := l.ClaimCapNotice(ctx, day, "g1")
		if err != nil || again == kept {
			t.Errorf("cap notice of %s claimed again: %v, %v; want %v", day, again, err, !kept)
		}
	}
}
