package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestKeptVoiceSessions: a guild's record is replaced by the next (a move), dropped only by the
// end of the session in the channel it names that started it (or an older one), and kept across a reopen of the database (a
// restart) on both drivers.
func TestKeptVoiceSessions(t *testing.T) { forEachDriverAt(t, testKeptVoiceSessions) }

func testKeptVoiceSessions(t *testing.T, s Store, driver, dsn string) {
	ctx := context.Background()
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	keep := func(v VoiceSession) {
		t.Helper()
		if err := s.KeepVoiceSession(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	list := func(s Store) []VoiceSession {
		t.Helper()
		vs, err := s.KeptVoiceSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	if vs := list(s); len(vs) != 0 {
		t.Fatalf("a new store keeps %v", vs)
	}
	keep(VoiceSession{GuildID: "g1", ChannelID: "v1", RequestedBy: "alice", JoinedAt: base.Add(time.Minute)})
	keep(VoiceSession{GuildID: "g2", ChannelID: "v2", RequestedBy: "bob", JoinedAt: base})
	// A move in g1: the record names the new channel, who asked, and when.
	moved := VoiceSession{GuildID: "g1", ChannelID: "v1b", RequestedBy: "carol", JoinedAt: base.Add(2 * time.Minute)}
	keep(moved)
	want := []VoiceSession{{GuildID: "g2", ChannelID: "v2", RequestedBy: "bob", JoinedAt: base}, moved}
	if got := list(s); !slices.Equal(got, want) {
		t.Fatalf("kept = %+v, want %+v (oldest first)", got, want)
	}
	// The end of the session moved away from v1 leaves the newer record alone.
	if err := s.DropVoiceSession(ctx, "g1", "v1", base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// So does the end of an older session of the same channel (one that ended on its own as a
	// /join started this record): a record joined after since stays.
	if err := s.DropVoiceSession(ctx, "g1", "v1b", moved.JoinedAt.Add(-time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.DropVoiceSession(ctx, "g9", "v9", base); err != nil {
		t.Errorf("dropping an absent record: %v", err)
	}
	if got := list(s); !slices.Equal(got, want) {
		t.Fatalf("after dropping other channels: %+v, want %+v", got, want)
	}
	if err := s.DropVoiceSession(ctx, "g2", "v2", base); err != nil { // its own record
		t.Fatal(err)
	}
	reopened, err := OpenDriver(ctx, driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if got := list(reopened); !slices.Equal(got, []VoiceSession{moved}) {
		t.Errorf("after a reopen: %+v, want %+v", got, []VoiceSession{moved})
	}
	for _, bad := range []VoiceSession{{ChannelID: "v"}, {GuildID: "g"}} {
		if err := s.KeepVoiceSession(ctx, bad); err == nil {
			t.Errorf("KeepVoiceSession(%+v): no error", bad)
		}
	}
}

// TestForgetMemberBlanksVoiceSessionRequester: after forget-me, the kept voice session the member
// asked for stays (the community still wants the bot there) without their id; other guilds'
// records and other members' are untouched.
func TestForgetMemberBlanksVoiceSessionRequester(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		for _, v := range []VoiceSession{
			{GuildID: "g1", ChannelID: "v1", RequestedBy: "alice", JoinedAt: at},
			{GuildID: "g2", ChannelID: "v2", RequestedBy: "alice", JoinedAt: at.Add(time.Second)},
			{GuildID: "g3", ChannelID: "v3", RequestedBy: "bob", JoinedAt: at.Add(2 * time.Second)},
		} {
			if err := s.KeepVoiceSession(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.ForgetMember(ctx, "g1", "alice", at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := s.KeptVoiceSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var who []string
		for _, v := range got {
			who = append(who, v.GuildID+":"+v.RequestedBy)
		}
		if want := []string{"g1:", "g2:alice", "g3:bob"}; !slices.Equal(who, want) {
			t.Errorf("requesters after alice's forget-me in g1: %v, want %v", who, want)
		}
	})
}
