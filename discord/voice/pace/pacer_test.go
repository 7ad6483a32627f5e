package pace

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestPacerNoDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(20 * time.Millisecond)
		ctx := context.Background()
		start := time.Now()
		for i := range 1000 {
			// Work of varying length inside each slot must not shift the grid.
			time.Sleep(time.Duration(i%7) * time.Millisecond)
			s, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.Index != int64(i) || s.Skipped != 0 {
				t.Fatalf("frame %d: slot %+v", i, s)
			}
			if want := start.Add(time.Duration(i) * 20 * time.Millisecond); !time.Now().Equal(want) {
				t.Fatalf("frame %d at %v, want %v", i, time.Since(start), want.Sub(start))
			}
		}
	})
}

func TestPacerSkipsAfterStall(t *testing.T) {
	tests := []struct {
		name        string
		stall       time.Duration
		wantSkipped int
		wantLate    time.Duration
	}{
		{"short-hiccup", 5 * time.Millisecond, 0, 0},
		{"just-under-one-frame", 39 * time.Millisecond, 0, 19 * time.Millisecond},
		{"one-frame", 40 * time.Millisecond, 1, 0},
		{"long-stall", 1013 * time.Millisecond, 49, 13 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := New(20 * time.Millisecond)
				ctx := context.Background()
				start := time.Now()
				p.Wait(ctx) // slot 0 at start
				time.Sleep(tt.stall)
				s, _ := p.Wait(ctx)
				if s.Skipped != tt.wantSkipped || s.Lateness != tt.wantLate {
					t.Fatalf("after stall: %+v, want skipped %d late %v", s, tt.wantSkipped, tt.wantLate)
				}
				// The next frames are back on the original grid, one per
				// interval: no burst.
				prev := time.Now()
				for range 5 {
					s, _ = p.Wait(ctx)
					if s.Skipped != 0 {
						t.Fatalf("skipped again: %+v", s)
					}
					if gap := time.Since(prev); gap > 20*time.Millisecond {
						t.Fatalf("gap %v", gap)
					}
					if off := time.Since(start) % (20 * time.Millisecond); off != 0 {
						t.Fatalf("off grid by %v", off)
					}
					prev = time.Now()
				}
				if want := int64(1 + tt.wantSkipped + 5); s.Index != want {
					t.Errorf("final index %d, want %d", s.Index, want)
				}
			})
		})
	}
}

func TestPacerResetAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(20 * time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		p.Wait(ctx)
		p.Wait(ctx)
		time.Sleep(time.Second)
		p.Reset()
		before := time.Now()
		if s, _ := p.Wait(ctx); s.Index != 0 || !time.Now().Equal(before) {
			t.Fatalf("after Reset: %+v", s)
		}
		go func() { time.Sleep(5 * time.Millisecond); cancel() }()
		if _, err := p.Wait(ctx); err != context.Canceled {
			t.Fatalf("Wait err = %v", err)
		}
	})
}

// TestPacerThreadSleep runs the clock_nanosleep path (with the real-time
// class when the process may use it) for a few short slots: indices advance
// one by one and Wait returns no earlier than each slot.
func TestPacerThreadSleep(t *testing.T) {
	p := New(3 * time.Millisecond)
	p.ThreadSleep = true
	if leave, err := EnterRealtime(5); err == nil {
		defer leave()
	} else {
		t.Logf("without the real-time class: %v", err)
	}
	ctx := context.Background()
	start := time.Now()
	next := int64(0)
	for i := range 10 {
		s, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Index != next+int64(s.Skipped) {
			t.Fatalf("frame %d: slot %+v, want index %d", i, s, next+int64(s.Skipped))
		}
		next = s.Index + 1
		if early := start.Add(time.Duration(s.Index) * 3 * time.Millisecond).Sub(time.Now()); early > 0 {
			t.Fatalf("frame %d returned %v before its slot", i, early)
		}
	}
}
