package logbuf

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"testing"
)

func TestBufferQueries(t *testing.T) {
	var b Buffer
	log := slog.New(slog.NewJSONHandler(&b, nil))
	log.Info("turn_started", "turn_id", "a")
	off := b.Len()
	log.Info("turn_ended", "turn_id", "a", "outcome", "spoken")
	log.Info("turn_ended", "turn_id", "b", "outcome", "skipped")
	fmt.Fprintln(&b, "not json, turn_ended")

	tests := []struct {
		name string
		got  int
		want int
	}{
		{"count one fragment", b.Count("turn_ended"), 3},
		{"count every fragment", b.Count(`"turn_ended"`, `"outcome":"spoken"`), 1},
		{"count none", b.Count("turn_failed"), 0},
		{"events by msg", len(b.Events("turn_ended")), 2},
		{"events never match a prefix", len(b.Events("turn")), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if ev := b.Events("turn_ended"); len(ev) == 2 && (ev[0]["turn_id"] != "a" || ev[1]["turn_id"] != "b") {
		t.Errorf("events out of order: %v", ev)
	}
	if s := b.Since(off); bytes.Contains([]byte(s), []byte("turn_started")) || !bytes.Contains([]byte(s), []byte("skipped")) {
		t.Errorf("Since(%d) = %q", off, s)
	}
	if s := b.Since(b.Len() + 5); s != "" {
		t.Errorf("Since past the end = %q, want empty", s)
	}
}

func TestBufferEchoAndConcurrentWrites(t *testing.T) {
	var echo bytes.Buffer
	b := new(Buffer).Echo(&echo)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				fmt.Fprintf(b, "line %d %d\n", i, j)
			}
		}()
	}
	wg.Wait()
	if n := b.Count("line"); n != 800 {
		t.Errorf("Count = %d, want 800 whole lines", n)
	}
	if echo.String() != b.String() {
		t.Errorf("echo differs from the buffer (%d against %d bytes)", echo.Len(), b.Len())
	}
}

func TestBufferChangedWakesAtTheNextWrite(t *testing.T) {
	var b Buffer
	fmt.Fprintln(&b, "before")
	ch := b.Changed()
	select {
	case <-ch:
		t.Fatal("Changed is closed before any write after it was taken")
	default:
	}
	if again := b.Changed(); again != ch {
		t.Error("two calls without a write between them return different channels")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Fprintln(&b, "after")
	}()
	<-ch // the test hangs here (and times out) if the write does not close it
	<-done
	if next := b.Changed(); next == ch {
		t.Error("Changed after a write returns the closed channel")
	}
}
