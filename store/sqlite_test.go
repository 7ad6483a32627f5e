package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTemp(t *testing.T) (*SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "banter.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestMigrationsOnEmptyAndExistingFile(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != len(migrations()) {
		t.Fatalf("schema version on a new file = %d, %v; want %d", v, err, len(migrations()))
	}
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	if err := s.SaveMessage(ctx, Message{ID: "1", ChannelID: "c", AuthorID: "u", Content: "hi", CreatedAt: at, IsSelf: true, Persona: "pirate"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening an existing, current file keeps its rows and runs nothing twice.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	m, err := s2.Message(ctx, "1")
	if err != nil || m.Persona != "pirate" || !m.CreatedAt.Equal(at) || !m.IsSelf {
		t.Fatalf("after reopen: %+v, %v", m, err)
	}
	var mode string
	if err := s2.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestMigratesFileFromOlderVersion(t *testing.T) {
	// A file made by an older banter (schema version 0, with unrelated data) is brought up to date.
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('kept')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var x string
	if err := s.db.QueryRow("SELECT x FROM notes").Scan(&x); err != nil || x != "kept" {
		t.Errorf("existing data lost: %q %v", x, err)
	}
	if v, _ := s.SchemaVersion(ctx); v != len(migrations()) {
		t.Errorf("version %d", v)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db, _ := sql.Open("sqlite", "file:"+path)
	if _, err := db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "newer than this banter knows") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
}

func TestUnwritableLocationNamesPath(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores permission bits; use a path under a regular file instead.
		file := filepath.Join(t.TempDir(), "plainfile")
		os.WriteFile(file, nil, 0o600)
		path := filepath.Join(file, "banter.db")
		_, err := Open(context.Background(), path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("err = %v, want one naming %s", err, path)
		}
		return
	}
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o500)
	path := filepath.Join(dir, "banter.db")
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
}

func TestMessagesLifecycle(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"10", "11", "12", "13"} {
		m := Message{ID: id, ChannelID: "c1", AuthorID: "u1", AuthorName: "alice", Content: "m" + id,
			CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if id == "12" {
			m.ReplyToID = "11"
		}
		if err := s.SaveMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	s.SaveMessage(ctx, Message{ID: "99", ChannelID: "other", AuthorID: "u", CreatedAt: base})

	if err := s.EditMessage(ctx, "11", "edited", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMessage(ctx, "13"); err != nil {
		t.Fatal(err)
	}
	if err := s.EditMessage(ctx, "404", "x", base); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit of unknown message: %v", err)
	}
	if err := s.DeleteMessage(ctx, "404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of unknown message: %v", err)
	}
	if _, err := s.Message(ctx, "404"); !errors.Is(err, ErrNotFound) {
		t.Errorf("lookup of unknown message: %v", err)
	}

	got, err := s.RecentMessages(ctx, "c1", time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "10,11,12" {
		t.Errorf("recent = %v, want oldest-first 10,11,12 (13 deleted, 99 elsewhere)", ids)
	}
	if got[1].Content != "edited" || got[2].ReplyToID != "11" {
		t.Errorf("edit or reply link lost: %+v", got)
	}
	got, _ = s.RecentMessages(ctx, "c1", base.Add(2*time.Minute), 1)
	if len(got) != 1 || got[0].ID != "11" {
		t.Errorf("before+limit = %+v, want [11]", got)
	}
	m, _ := s.Message(ctx, "13")
	if !m.Deleted {
		t.Error("deleted message not flagged")
	}

	// A deletion is final: a later save of the same message (the bot's own record of a reply it
	// sent, racing the gateway's delete event) does not bring it back.
	if err := s.SaveMessage(ctx, Message{ID: "13", ChannelID: "c1", AuthorID: "u1", Content: "late save", CreatedAt: base.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message(ctx, "13"); !m.Deleted || m.Content != "late save" {
		t.Errorf("re-saved deleted message = %+v, want still deleted with the new content", m)
	}

	// Re-saving a bot message without a persona keeps the persona stored earlier.
	s.SaveMessage(ctx, Message{ID: "50", ChannelID: "c1", AuthorID: "bot", IsSelf: true, Persona: "pirate", CreatedAt: base})
	s.SaveMessage(ctx, Message{ID: "50", ChannelID: "c1", AuthorID: "bot", IsSelf: true, Content: "synced", CreatedAt: base})
	if m, _ := s.Message(ctx, "50"); m.Persona != "pirate" || m.Content != "synced" {
		t.Errorf("persona lost on re-save: %+v", m)
	}

	n, err := s.Prune(ctx, base.Add(90*time.Second), base)
	if err != nil || n != 4 { // 10, 11, 99, 50
		t.Errorf("prune removed %d, %v; want 4", n, err)
	}
}

func TestPersonasAndLedger(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	s.SavePersona(ctx, UserPersona{UserID: "u1", PreferredName: "Al", Pronouns: "she/her", UpdatedAt: now})
	s.SavePersona(ctx, UserPersona{UserID: "u1", PreferredName: "Alice", Pronouns: "she/her", UpdatedAt: now})
	p, err := s.Personas(ctx, []string{"u1", "u2"})
	if err != nil || len(p) != 1 || p["u1"].PreferredName != "Alice" {
		t.Errorf("personas = %+v, %v", p, err)
	}

	for i := range 3 {
		s.RecordPrompt(ctx, "c1", PromptExplicit, now.Add(-time.Duration(i)*20*time.Minute))
	}
	s.RecordPrompt(ctx, "c1", PromptInitiative, now.Add(-2*time.Hour))
	s.RecordPrompt(ctx, "c2", PromptInitiative, now)
	if err := s.RecordPrompt(ctx, "c1", PromptUnknown, now); err == nil {
		t.Error("unknown kind recorded")
	}
	counts, err := s.CountPrompts(ctx, "c1", now.Add(-time.Hour))
	if err != nil || counts[PromptExplicit] != 3 || counts[PromptInitiative] != 0 {
		t.Errorf("counts = %v, %v", counts, err)
	}
	if _, err := s.Prune(ctx, time.Time{}, now); err != nil {
		t.Fatal(err)
	}
	counts, _ = s.CountPrompts(ctx, "c1", time.Time{})
	if counts[PromptInitiative] != 0 || counts[PromptExplicit] != 3 {
		t.Errorf("ledger prune kept old rows or dropped recent ones: %v", counts)
	}
}

// TestLedgerStaysSmallWithoutPrune: recording a prompt drops the channel's rows older than the
// ledger's hour, so the table does not grow when retention pruning is off.
func TestLedgerStaysSmallWithoutPrune(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := range 10 {
		if err := s.RecordPrompt(ctx, "c1", PromptExplicit, now.Add(time.Duration(i-10)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	s.RecordPrompt(ctx, "c2", PromptInitiative, now.Add(-5*time.Hour))
	s.RecordPrompt(ctx, "c1", PromptInitiative, now.Add(-30*time.Minute))
	s.RecordPrompt(ctx, "c1", PromptExplicit, now)
	var rows int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM prompt_ledger WHERE channel_id='c1'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 3 { // now-1h (exactly an hour old), now-30m, now
		t.Errorf("c1 ledger holds %d rows, want 3", rows)
	}
	counts, err := s.CountPrompts(ctx, "c2", time.Time{})
	if err != nil || counts[PromptInitiative] != 1 {
		t.Errorf("another channel's row was trimmed: %v, %v", counts, err)
	}
}

// TestPathWithURICharacters: a store.dsn holding characters special in a file: URI opens the
// file it names (before, "a?b.db" wrote to "a" and "a%20b.db" to "a b.db").
func TestPathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"a?b.db", "a#b.db", "a%20b.db", "a b.db"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SaveMessage(ctx, Message{ID: "1", ChannelID: "c", AuthorID: "u", CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(filepath.Dir(path))
			if len(ents) != 1 || ents[0].Name() != name {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Fatalf("folder holds %q, want only %q", names, name)
			}
			s, err = Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Message(ctx, "1"); err != nil {
				t.Errorf("message lost on reopen: %v", err)
			}
		})
	}
}
