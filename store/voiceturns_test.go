package store

import (
	"context"
	"testing"
	"time"
)

// TestOpenVoiceTurns: a guild's open voice turn replaces the one before, is dropped only by its
// own turn, outlives a reopen of the database (a restart), and is taken once (read and
// deleted); forget-me deletes the member's record, Prune the records older than its cutoff; on
// both drivers.
func TestOpenVoiceTurns(t *testing.T) { forEachDriverAt(t, testOpenVoiceTurns) }

func testOpenVoiceTurns(t *testing.T, s Store, driver, dsn string) {
	ctx := context.Background()
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	keep := func(s Store, v OpenVoiceTurn) {
		t.Helper()
		if err := s.KeepOpenVoiceTurn(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	take := func(s Store, guild string) (OpenVoiceTurn, bool) {
		t.Helper()
		v, ok, err := s.TakeOpenVoiceTurn(ctx, guild)
		if err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
	if v, ok := take(s, "g1"); ok {
		t.Fatalf("a new store has an open voice turn: %+v", v)
	}
	first := OpenVoiceTurn{GuildID: "g1", ChannelID: "v1", TurnID: "u1-1", SpeakerID: "alice", SpeakerName: "Alice",
		Transcript: "hey banter, what's up?", Addressed: true, Audio: 1500 * time.Millisecond, HeardAt: base}
	keep(s, first)
	next := OpenVoiceTurn{GuildID: "g1", ChannelID: "v1", TurnID: "u2-1", SpeakerID: "bob", SpeakerName: "Bob",
		Transcript: "and you?", Audio: 700 * time.Millisecond, HeardAt: base.Add(time.Minute)}
	keep(s, next) // the bot answers bob next: one record a guild
	other := OpenVoiceTurn{GuildID: "g2", ChannelID: "v2", TurnID: "u3-1", SpeakerID: "carol", Transcript: "hi", HeardAt: base}
	keep(s, other)
	// The end of the first reply, written late, leaves the newer turn's record.
	if err := s.DropOpenVoiceTurn(ctx, "g1", first.TurnID); err != nil {
		t.Fatal(err)
	}
	if err := s.DropOpenVoiceTurn(ctx, "g9", "u"); err != nil {
		t.Errorf("dropping an absent record: %v", err)
	}

	reopened, err := OpenDriver(ctx, driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if got, ok := take(reopened, "g1"); !ok || got != next {
		t.Errorf("taken after a reopen: %+v %v, want %+v", got, ok, next)
	}
	if got, ok := take(reopened, "g1"); ok {
		t.Errorf("taken twice: %+v", got)
	}
	// Its own turn's end drops a record.
	if err := s.DropOpenVoiceTurn(ctx, "g2", other.TurnID); err != nil {
		t.Fatal(err)
	}
	if got, ok := take(s, "g2"); ok {
		t.Errorf("dropped by its turn, still there: %+v", got)
	}

	// Forget-me in g1 deletes alice's record there, not elsewhere nor anyone else's.
	keep(s, first)
	keep(s, OpenVoiceTurn{GuildID: "g2", ChannelID: "v2", TurnID: "u4-1", SpeakerID: "alice", Transcript: "hello", HeardAt: base})
	keep(s, OpenVoiceTurn{GuildID: "g3", ChannelID: "v3", TurnID: "u5-1", SpeakerID: "bob", Transcript: "yo", HeardAt: base.Add(time.Hour)})
	if _, err := s.ForgetMember(ctx, "g1", "alice", base.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, ok := take(s, "g1"); ok {
		t.Errorf("alice's record after her forget-me: %+v", got)
	}
	// Prune takes what is older than its cutoff.
	if _, err := s.Prune(ctx, base.Add(time.Minute), base.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, ok := take(s, "g2"); ok {
		t.Errorf("a record older than the cutoff after Prune: %+v", got)
	}
	if _, ok := take(s, "g3"); !ok {
		t.Error("Prune took a record newer than its cutoff")
	}

	for _, bad := range []OpenVoiceTurn{{ChannelID: "v", TurnID: "u", SpeakerID: "a"}, {GuildID: "g", TurnID: "u", SpeakerID: "a"},
		{GuildID: "g", ChannelID: "v", SpeakerID: "a"}, {GuildID: "g", ChannelID: "v", TurnID: "u"}} {
		if err := s.KeepOpenVoiceTurn(ctx, bad); err == nil {
			t.Errorf("KeepOpenVoiceTurn(%+v): no error", bad)
		}
	}
}
