package store

import (
	"context"
	"database/sql"
	"fmt"
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

// TestSearchIndexesMessagesStoredBeforeIt: a database made before full-text search existed
// (schema version 1) finds its old messages after the upgrade.
func TestSearchIndexesMessagesStoredBeforeIt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations()[0] + `; PRAGMA user_version = 1;
		INSERT INTO messages (id, channel_id, guild_id, author_id, content, created_at) VALUES ('1', 'c', 'g', 'u', 'remember the lighthouse', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.SearchMessages(ctx, SearchQuery{GuildID: "g", Text: "lighthouse"})
	if err != nil || len(got) != 1 || got[0].ID != "1" {
		t.Errorf("old message not found after the upgrade: %+v, %v", got, err)
	}
}

// FuzzSearchMessages: whatever text a model or a person asks to search for, the query runs
// (no syntax error from the full-text engine) and respects the guild.
func FuzzSearchMessages(f *testing.F) {
	for _, seed := range []string{"pizza", `"quoted" OR NOT x*`, "NEAR(a b)", "col:term", "^start", "ünïcödé", "a\x00b", "((((", strings.Repeat("word ", 100)} {
		f.Add(seed)
	}
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	s.SaveMessage(ctx, Message{ID: "1", GuildID: "g", ChannelID: "c", AuthorID: "u", Content: "pizza NEAR the quoted col term", CreatedAt: time.Unix(1, 0)})
	s.SaveMessage(ctx, Message{ID: "2", GuildID: "other", ChannelID: "c", AuthorID: "u", Content: "pizza", CreatedAt: time.Unix(1, 0)})
	f.Fuzz(func(t *testing.T, text string) {
		got, err := s.SearchMessages(ctx, SearchQuery{GuildID: "g", Text: text})
		if err != nil {
			t.Fatalf("search %q: %v", text, err)
		}
		for _, m := range got {
			if m.GuildID != "g" {
				t.Fatalf("search %q returned a message of guild %q", text, m.GuildID)
			}
		}
		if n := len(searchTerms(text)); n > maxSearchTerms {
			t.Fatalf("%d terms", n)
		}
	})
}

// TestLedgerUpgradeKeepsRows: a database made before the ledger knew users (schema version 2)
// keeps its rows through the upgrade; they count for the channel, and new rows carry the user.
func TestLedgerUpgradeKeepsRows(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := migrations()[:2]
	if _, err := db.Exec(old[0] + ";" + old[1] + `; PRAGMA user_version = 2;
		INSERT INTO prompt_ledger (channel_id, kind, at) VALUES ('c1', 'explicit', ` + fmt.Sprint(ms(now.Add(-time.Minute))) + `)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RecordPrompt(ctx, Prompt{ChannelID: "c1", UserID: "alice", Kind: PromptExplicit, At: now}); err != nil {
		t.Fatal(err)
	}
	counts, err := s.CountPrompts(ctx, "c1", now.Add(-time.Hour))
	if err != nil || counts[PromptExplicit] != 2 {
		t.Errorf("channel counts after the upgrade = %v, %v; want 2 explicit", counts, err)
	}
	if n, err := s.CountUserPrompts(ctx, "c1", "alice", now.Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("alice's count = %d, %v; want 1", n, err)
	}
}

// TestImagesUpgradeKeepsMessages: a database made before messages kept their images (schema
// version 3) keeps its messages, which have none, and stores images from then on.
func TestImagesUpgradeKeepsMessages(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v3.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := migrations()[:3]
	if _, err := db.Exec(strings.Join(old, ";") + `; PRAGMA user_version = 3;
		INSERT INTO messages (id, channel_id, guild_id, author_id, content, created_at) VALUES ('1', 'c', 'g', 'u', 'before images', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Message(ctx, "1"); err != nil || m.Content != "before images" || m.Images != nil {
		t.Fatalf("old message = %+v, %v", m, err)
	}
	im := Image{Source: "attachment", URL: "https://cdn.discordapp.com/a/b/c.png", Filename: "c.png"}
	if err := s.SaveMessage(ctx, Message{ID: "2", ChannelID: "c", GuildID: "g", AuthorID: "u", CreatedAt: time.Unix(2, 0), Images: []Image{im}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message(ctx, "2"); len(m.Images) != 1 || m.Images[0] != im {
		t.Errorf("new message images = %+v", m.Images)
	}
}
