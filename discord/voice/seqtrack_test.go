package voice

import "testing"

func TestSeqTracker(t *testing.T) {
	type step struct {
		seq  uint16
		v    seqVerdict
		gap  int
		lost int
	}
	tests := []struct {
		name      string
		steps     []step
		wantFlush int
	}{
		{"in-order", []step{{10, seqNew, 0, 0}, {11, seqNew, 0, 0}, {12, seqNew, 0, 0}}, 0},
		{"gap-then-fill", []step{{10, seqNew, 0, 0}, {13, seqNew, 2, 0}, {11, seqLate, 0, 0}, {12, seqLate, 0, 0}}, 0},
		{"gap-never-filled", []step{{10, seqNew, 0, 0}, {13, seqNew, 2, 0}}, 2},
		{"duplicate", []step{{10, seqNew, 0, 0}, {11, seqNew, 0, 0}, {11, seqDuplicate, 0, 0}, {10, seqDuplicate, 0, 0}}, 0},
		{"wraparound", []step{{65534, seqNew, 0, 0}, {65535, seqNew, 0, 0}, {1, seqNew, 1, 0}, {0, seqLate, 0, 0}}, 0},
		{"before-first-is-too-old", []step{{10, seqNew, 0, 0}, {9, seqTooOld, 0, 0}}, 0},
		{"loss-counted-when-leaving-window", []step{{0, seqNew, 0, 0}, {2, seqNew, 1, 0}, {66, seqNew, 63, 1}, {1, seqTooOld, 0, 0}}, 63},
		{"jump-over-window", []step{{0, seqNew, 0, 0}, {2, seqNew, 1, 0}, {102, seqNew, 99, 1 + 36}}, 63},
		{"restart-is-not-loss", []step{{100, seqNew, 0, 0}, {30000, seqNew, 0, 0}, {30001, seqNew, 0, 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr seqTracker
			total := 0
			for i, s := range tt.steps {
				peek := tr.check(s.seq)
				v, gap, lost := tr.update(s.seq)
				if (peek == seqDuplicate || peek == seqTooOld || v == seqDuplicate || v == seqTooOld) && peek != v {
					t.Fatalf("step %d: check %d, update %d", i, peek, v)
				}
				if v != s.v || gap != s.gap || lost != s.lost {
					t.Fatalf("step %d (seq %d): got %d gap %d lost %d; want %d %d %d", i, s.seq, v, gap, lost, s.v, s.gap, s.lost)
				}
				total += lost
			}
			if got := tr.flush(); got != tt.wantFlush {
				t.Errorf("flush = %d, want %d", got, tt.wantFlush)
			}
			if again := tr.flush(); again != 0 {
				t.Errorf("second flush = %d", again)
			}
		})
	}
}

// TestSeqTrackerExactLoss sends a long sequence with a fixed pattern of loss,
// reordering and duplication and checks that lost = never delivered.
func TestSeqTrackerExactLoss(t *testing.T) {
	var tr seqTracker
	lost, delivered := 0, map[uint16]bool{}
	seq := uint16(65000) // crosses the wrap
	var held []uint16
	for i := range 3000 {
		s := seq + uint16(i)
		switch {
		case i%17 == 5: // lost
			continue
		case i%23 == 7: // reordered: arrives three packets later
			held = append(held, s)
			continue
		}
		for _, x := range [][]uint16{{s}, held} {
			for _, q := range x {
				v, _, l := tr.update(q)
				lost += l
				if v == seqNew || v == seqLate {
					if delivered[q] {
						t.Fatalf("seq %d delivered twice", q)
					}
					delivered[q] = true
				}
			}
		}
		held = held[:0]
		if i%31 == 0 { // duplicate
			if v, _, _ := tr.update(s); v != seqDuplicate {
				t.Fatalf("dup of %d: %d", s, v)
			}
		}
	}
	lost += tr.flush()
	if want := 3000 - len(delivered); lost != want {
		t.Errorf("lost = %d, want %d (delivered %d)", lost, want, len(delivered))
	}
}
