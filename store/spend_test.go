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
