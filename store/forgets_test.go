package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/store/storetest"
)

// TestForgetWatermark: after forget-me, the member's messages said at or before it, facts
// about them from then and facts one of whose origins is theirs are refused (ErrForgotten);
// what they say after it, and everything of other members and of other guilds, is stored as
// before; Forgot reads the watermark. The watermark holds no id, and a later forget-me never
// moves it back.
func TestForgetWatermark(t *testing.T) { forEachDriverAt(t, testForgetWatermark) }

func testForgetWatermark(t *testing.T, s Store, driver, dsn string) {
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	forgot := base.Add(time.Hour)
	const alice = "424242424242"
	save := func(id, guild, author string, at time.Time) error {
		return s.SaveMessage(ctx, Message{ID: id, ChannelID: "c-" + guild, GuildID: guild, AuthorID: author, Content: "words of " + id, CreatedAt: at})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrForgotten) {
			t.Errorf("%s: %v, want ErrForgotten", what, err)
		}
	}
	must(save("m1", "g1", alice, base))
	if _, err := s.ForgetMember(ctx, "g1", alice, forgot); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, guild, user string
		at                time.Time
		want              bool
	}{
		{"her words from before", "g1", alice, base, true},
		{"her words at the watermark", "g1", alice, forgot, true},
		{"her words after", "g1", alice, forgot.Add(time.Millisecond), false},
		{"bob's words from before", "g1", "bob", base, false},
		{"her words in another server", "g2", alice, base, false},
	} {
		if got, err := s.Forgot(ctx, c.guild, c.user, c.at); err != nil || got != c.want {
			t.Errorf("Forgot, %s = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	refused("her message again, stored after forget-me", save("m1", "g1", alice, base))
	refused("her message at the watermark", save("m2", "g1", alice, forgot))
	if _, err := s.Message(ctx, "m1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("m1 after a refused save: %v", err)
	}
	must(save("m3", "g1", alice, forgot.Add(time.Millisecond))) // after forget-me: remembered again
	must(save("m4", "g1", "bob", base))
	must(save("m5", "g2", alice, base))
	reply := func(id, author string, self bool, to string, origin Origin) error {
		return s.SaveMessage(ctx, Message{ID: id, ChannelID: "c-g1", GuildID: "g1", AuthorID: author, IsSelf: self, Content: "re " + to,
			CreatedAt: forgot.Add(time.Minute), ReplyToID: to, ReplyToOrigin: origin})
	}
	refused("banter's reply to her words from before", reply("r1", "bot", true, "m1", Origin{AuthorID: alice, At: base}))
	must(reply("r2", "bob", false, "m1", Origin{AuthorID: alice, At: base}))
	must(reply("r3", "bot", true, "m3", Origin{AuthorID: alice, At: forgot.Add(time.Millisecond)}))
	must(reply("r4", "bot", true, "m4", Origin{AuthorID: "bob", At: base}))
	for id, want := range map[string]string{"r2": "", "r3": "m3", "r4": "m4"} {
		if m, err := s.Message(ctx, id); err != nil || m.ReplyToID != want {
			t.Errorf("%s: reply to %q (%v), want %q", id, m.ReplyToID, err, want)
		}
	}

	_, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: alice, Statement: "has a cat", CreatedAt: base})
	refused("a fact about her from before", err)
	_, err = s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: FactServer, Statement: "a band", SourceIDs: []string{"m4"}, CreatedAt: base,
		Origins: []Origin{{AuthorID: "bob", At: base}, {AuthorID: alice, At: base}}})
	refused("a server fact from her words and bob's", err)
	band, err := s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: FactServer, Statement: "bob's band", SourceIDs: []string{"m4"}, CreatedAt: base,
		Origins: []Origin{{AuthorID: "bob", At: base}}})
	must(err)
	refused("her message merged into bob's fact", s.AddFactSources(ctx, "g1", band.ID, []string{"m1"}, []Origin{{AuthorID: alice, At: base}}))
	_, err = s.ReplaceFact(ctx, band.ID, Fact{GuildID: "g1", SubjectID: FactServer, Statement: "her band", CreatedAt: base,
		Origins: []Origin{{AuthorID: alice, At: base}}})
	refused("a correction from her words", err)
	_, err = s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: alice, Statement: "has a dog", SourceIDs: []string{"m3"},
		CreatedAt: forgot.Add(time.Millisecond), Origins: []Origin{{AuthorID: alice, At: forgot.Add(time.Millisecond)}}})
	must(err)
	_, err = s.AddFact(ctx, Fact{GuildID: "g2", SubjectID: alice, Statement: "lives in Porto", SourceIDs: []string{"m5"}, CreatedAt: base})
	must(err)
	if fs, _ := s.Facts(ctx, FactQuery{GuildID: "g1"}); statements(fs) != "has a dog; bob's band" || strings.Join(fs[1].SourceIDs, ",") != "m4" {
		t.Errorf("g1's facts = %q %v", statements(fs), fs)
	}
	must(s.SaveMessageEmbeddings(ctx, []MessageEmbedding{{MessageID: "m1", Content: "words of m1", Embedding: Embedding{testModel, vec(1)}}}))
	if n := rawCount(t, s, `SELECT COUNT(*) FROM message_embeddings WHERE message_id='m1'`); n != 0 {
		t.Errorf("%d embeddings of a forgotten message", n)
	}
	hits, err := storetest.Scan(ctx, driver, dsn, []string{alice})
	must(err)
	for _, h := range hits {
		if h.Table == "memory_forgets" {
			t.Errorf("the watermark names her: %s", h.Row)
		}
	}
	// An earlier forget-me (a clock set back) keeps the later watermark.
	if _, err := s.ForgetMember(ctx, "g1", alice, base); err != nil {
		t.Fatal(err)
	}
	refused("her message from between the two", save("m6", "g1", alice, forgot.Add(-time.Minute)))
}

// TestForgetMemberRacesWrites: writers store a member's messages, facts, rate-limit ledger rows
// and durable turns, all said before
// their forget-me, as fast as they can while it runs; each stops at its first refusal. Once
// all are done, nothing of the member is left in the guild: every write either ran before
// forget-me (and was deleted by it) or after (and was refused). On Postgres the writes run on
// several connections at once; without the guild's forget lock, one slips in between
// ForgetMember's deletes and its commit.
func TestForgetMemberRacesWrites(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		const alice, writers = "424242424242", 4
		var wg sync.WaitGroup
		started := make(chan struct{}, writers)
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					at := base.Add(time.Duration(i) * time.Millisecond)
					err := s.SaveMessage(ctx, Message{ID: fmt.Sprintf("w%d-%d", w, i), ChannelID: "c", GuildID: "g1", AuthorID: alice, Content: "x", CreatedAt: at})
					if err == nil {
						_, err = s.AddFact(ctx, Fact{GuildID: "g1", SubjectID: alice, Statement: fmt.Sprintf("fact %d-%d", w, i), CreatedAt: at,
							SourceIDs: []string{fmt.Sprintf("w%d-%d", w, i)}, Origins: []Origin{{AuthorID: alice, At: at}}})
					}
					if err == nil {
						err = s.RecordPrompt(ctx, Prompt{GuildID: "g1", ChannelID: "c", UserID: alice, SaidAt: at, Kind: PromptExplicit, At: at})
					}
					if err == nil {
						err = s.OpenTurn(ctx, Turn{MessageID: fmt.Sprintf("w%d-%d", w, i), ChannelID: "c", GuildID: "g1", AdmittedAt: at,
							Author: Origin{AuthorID: alice, At: at}})
					}
					if i == 10 {
						started <- struct{}{}
					}
					if errors.Is(err, ErrForgotten) {
						return
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for range writers {
			<-started
		}
		if _, err := s.ForgetMember(ctx, "g1", alice, base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := rawCount(t, s, `SELECT COUNT(*) FROM messages WHERE author_id='`+alice+`'`); n != 0 {
			t.Errorf("%d of her messages written back after forget-me", n)
		}
		if n := rawCount(t, s, `SELECT COUNT(*) FROM facts WHERE subject_id='`+alice+`'`); n != 0 {
			t.Errorf("%d facts about her written back after forget-me", n)
		}
		if n := rawCount(t, s, `SELECT COUNT(*) FROM prompt_ledger WHERE user_id='`+alice+`'`); n != 0 {
			t.Errorf("%d ledger rows naming her written back after forget-me", n)
		}
		if n := rawCount(t, s, `SELECT COUNT(*) FROM turns`); n != 0 {
			t.Errorf("%d turns of her messages written back after forget-me", n)
		}
	})
}
