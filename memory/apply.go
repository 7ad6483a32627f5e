package memory

import (
	"context"
	"errors"
	"strings"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// apply stores the facts of a valid answer: a repeat merges its sources into the fact it
// repeats, a correction retires the fact it corrects, anything else is a new fact. A fact
// whose sources were all deleted meanwhile (a deleted message, /memory forget-me), or whose
// statement holds a ban word, is dropped. It returns the facts it stored (new or corrections).
func (e *Extractor) apply(ctx context.Context, cfg *config.Config, guild string, batch []store.Message, known []store.Fact, ops []Op) []store.Fact {
	byID := make(map[string]store.Message, len(batch))
	for _, m := range batch {
		byID[m.ID] = m
	}
	filter := safety.ForConfig(cfg)
	var stored []store.Fact
	for _, op := range ops {
		sources := e.liveSources(ctx, guild, op.Sources)
		if len(sources) == 0 {
			e.opts.Metrics.fact("source_gone")
			continue
		}
		if filter.Exclude("", op.Statement, false) != safety.Allowed {
			e.opts.Metrics.fact("ban_word")
			continue
		}
		f := store.Fact{GuildID: guild, SubjectID: op.Subject, Statement: op.Statement, SourceIDs: sources, CreatedAt: byID[sources[0]].CreatedAt,
			Origins: originsOf(byID, op.Sources)}
		if op.Subject != store.FactServer {
			for _, src := range sources {
				if m := byID[src]; m.AuthorID == op.Subject {
					f.SubjectName = m.AuthorName
				}
			}
		}
		if op.SameAs == 0 && op.Supersedes == 0 {
			op.SameAs = sameStatement(known, op)
		}
		if added, ok := e.store1(ctx, guild, known, op, f); ok {
			stored = append(stored, added)
		}
	}
	return stored
}

// store1 writes one fact (see apply) and returns it when it stored a new one.
func (e *Extractor) store1(ctx context.Context, guild string, known []store.Fact, op Op, f store.Fact) (store.Fact, bool) {
	var err error
	outcome := "added"
	switch {
	case op.SameAs > 0:
		outcome = "merged"
		err = e.opts.Store.AddFactSources(ctx, guild, known[op.SameAs-1].ID, f.SourceIDs, f.Origins)
	case op.Supersedes > 0:
		outcome = "superseded"
		var replaced store.Fact
		replaced, err = e.opts.Store.ReplaceFact(ctx, known[op.Supersedes-1].ID, f)
		if errors.Is(err, store.ErrNotFound) { // deleted or retired meanwhile: the fact stands alone
			outcome = "added"
			replaced, err = e.opts.Store.AddFact(ctx, f)
		}
		f = replaced
	default:
		f, err = e.opts.Store.AddFact(ctx, f)
	}
	switch {
	case errors.Is(err, store.ErrForgotten):
		e.refused(guild, "fact", outcome)
		outcome = "forgotten"
	case errors.Is(err, store.ErrFactLocked):
		outcome = "locked"
	case errors.Is(err, store.ErrNotFound):
		outcome = "target_gone"
	case err != nil:
		outcome = "failed"
		e.opts.Logger.Warn("store_failed", "op", "memory_apply", "guild_id", guild, "error", err.Error())
	}
	e.opts.Metrics.fact(outcome)
	return f, err == nil && outcome != "merged"
}

// originsOf are who said each of a fact's sources and when: all of them, the ones deleted
// since included, so that a fact from the words of a member who ran forget-me meanwhile is
// refused by the store (store.Fact.Origins).
func originsOf(byID map[string]store.Message, sources []string) []store.Origin {
	out := make([]store.Origin, 0, len(sources))
	for _, id := range sources {
		if m, ok := byID[id]; ok {
			out = append(out, store.Origin{AuthorID: m.AuthorID, At: m.CreatedAt})
		}
	}
	return out
}

// refused logs and counts a write the store refused because a member ran forget-me after
// what it held was said (what: message, fact; op: how it was to be written). The member is
// not named: they asked to be forgotten.
func (e *Extractor) refused(guild, what, op string) {
	e.opts.Logger.Info("memory_write_refused", "guild_id", guild, "what", what, "op", op, "reason", "forgotten")
	e.opts.Metrics.forgetRefused(what)
}

// liveSources keeps the sources still stored, not deleted, in the guild.
func (e *Extractor) liveSources(ctx context.Context, guild string, ids []string) []string {
	var out []string
	for _, id := range ids {
		m, err := e.opts.Store.Message(ctx, id)
		if err == nil && !m.Deleted && m.GuildID == guild {
			out = append(out, id)
		}
	}
	return out
}

// sameStatement is the number of a known fact of op's subject saying the same words (a
// duplicate the model did not mark), else 0.
func sameStatement(known []store.Fact, op Op) int {
	for i, f := range known {
		if f.SubjectID == op.Subject && strings.EqualFold(f.Statement, op.Statement) {
			return i + 1
		}
	}
	return 0
}
