package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestInstrumentCounts: calls on a real SQLite store are counted by op and
// result, failures included (a closed store fails every call), and a write refused by a
// forget-me watermark as forgotten, not error.
func TestInstrumentCounts(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s := Instrument(db, reg)
	now := time.Now()
	if err := s.SaveMessage(ctx, Message{ID: "1", ChannelID: "c", AuthorID: "u", Content: "hi", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPrompt(ctx, Prompt{ChannelID: "c", UserID: "u", Kind: PromptExplicit, At: now}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountUserPrompts(ctx, "c", "u", now.Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("user prompts = %d, %v", n, err)
	}
	if _, err := s.ForgetMember(ctx, "g", "gone", now); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPrompt(ctx, Prompt{GuildID: "g", ChannelID: "c", UserID: "gone", SaidAt: now, Kind: PromptExplicit, At: now}); !errors.Is(err, ErrForgotten) {
		t.Fatalf("a ledger row after forget-me: %v", err)
	}
	if _, err := s.Message(ctx, "404"); err == nil {
		t.Fatal("missing message found")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecentMessages(ctx, "c", now, 10); err == nil {
		t.Fatal("closed store answered")
	}
	ops := func(c prometheus.Counter) float64 {
		var m dto.Metric
		if err := c.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	vec := s.(*instrumented).ops
	for _, c := range []struct {
		op, result string
		want       float64
	}{
		{"save_message", "ok", 1},
		{"message", "not_found", 1},
		{"recent_messages", "error", 1},
		{"recent_messages", "ok", 0},
		{"record_prompt", "ok", 1},
		{"record_prompt", "forgotten", 1}, // not an error: the store-errors alert stays quiet
		{"record_prompt", "error", 0},
		{"count_user_prompts", "ok", 1},
	} {
		if got := ops(vec.WithLabelValues(c.op, c.result)); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.op, c.result, got, c.want)
		}
	}
}
