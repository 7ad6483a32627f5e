package text

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/store"
)

// TestParticipantsKeepRecentSpeakers: capping the participants block keeps the people who spoke
// last, the trigger's author included even when they first spoke long before the others.
func TestParticipantsKeepRecentSpeakers(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "banter.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &Service{opts: Options{Store: st}, logger: slog.New(slog.DiscardHandler)}
	cfg := config.Default()
	cfg.Context.MaxParticipants = 2
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	line := func(id, author string) store.Message {
		at = at.Add(time.Second)
		return store.Message{ID: id, AuthorID: author, AuthorName: author, CreatedAt: at}
	}
	tests := []struct {
		name string
		ms   []store.Message
		want []string
	}{
		{"under the cap", []store.Message{line("1", "bob"), line("2", "alice")}, []string{"bob", "alice"}},
		{"trigger author spoke first", []store.Message{line("1", "alice"), line("2", "bob"), line("3", "carol"),
			line("4", "dave"), line("5", "alice")}, []string{"alice", "dave"}},
		{"bot lines do not count", []store.Message{line("1", "bob"), {ID: "2", AuthorID: "me", IsSelf: true},
			line("3", "carol"), line("4", "alice")}, []string{"carol", "alice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.participants(context.Background(), cfg, tt.ms)
			var names []string
			for _, p := range got {
				names = append(names, p.name)
			}
			if len(names) != len(tt.want) {
				t.Fatalf("participants = %v, want %v", names, tt.want)
			}
			for i := range names {
				if names[i] != tt.want[i] {
					t.Fatalf("participants = %v, want %v", names, tt.want)
				}
			}
		})
	}
}
