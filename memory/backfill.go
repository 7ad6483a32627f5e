package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// The embedding backfill (docs/memory.md, "Backfill"): a background worker that embeds the
// facts and messages that have no embedding of the current embeddings model (stored before
// embeddings were on, while the provider failed, or under another model), newest first, one
// page a call, paced by embeddings.backfill.batchesPerMinute (shared by the processes of one
// Postgres store), and only while the guild stands under its budgets' soft threshold. Each
// guild is embedded by one process at a time (the store's lease); a pass walks every guild
// once, then the worker waits backfillIdle and looks again, so what is left (a failure, a
// restart, a new model) is picked up where the data says, not where a process was.

// BudgetStanding tells the backfill where a guild stands against its daily budgets;
// *budget.Guard is one.
type BudgetStanding interface {
	State(ctx context.Context, guild string) budget.State
}

// BackfillOptions configure a Backfill.
type BackfillOptions struct {
	// Config is read for every page (embeddings.*, memory.*: reloads apply at once).
	Config func() *config.Config
	Store  store.Store
	// Embedder makes the calls (the embeddings slot, metered and gated like every call).
	Embedder *Embedder
	// Budget, when set, stops a guild's backfill at its soft threshold; nil: no budgets.
	Budget  BudgetStanding
	Logger  *slog.Logger
	Metrics *Metrics
	// Holder names this process in the store's leases (empty: host, pid and a random tag).
	Holder string
}

// Backfill is the embedding backfill worker.
type Backfill struct {
	opts BackfillOptions
	log  *slog.Logger

	wake chan struct{} // a reload turned the backfill on or changed it: pass now

	mu        sync.Mutex // guards the following
	pace      store.Budget
	paceEvery time.Duration
}

// Backfill timings: a guild's lease (renewed every page), the wait between passes, and the
// age below which facts and messages are left to extraction's own embedding.
const (
	backfillLease  = 5 * time.Minute
	backfillIdle   = 10 * time.Minute
	backfillSettle = time.Hour
)

// Why a guild's pass stopped before it was done (memory_backfill_stopped, and
// banter_memory_backfill_stops_total{reason}).
const (
	stopBudget = "budget" // past the soft threshold or at the cap
	stopFailed = "failed" // the provider or the store failed: tried again next pass
	stopLease  = "lease"  // another process holds the guild
	stopOff    = "off"    // embeddings, the backfill or memory was turned off meanwhile
)

// NewBackfill returns a Backfill.
func NewBackfill(opts BackfillOptions) (*Backfill, error) {
	if opts.Config == nil || opts.Store == nil || opts.Embedder == nil {
		return nil, errors.New("memory: new backfill: config, store and embedder are required")
	}
	if opts.Holder == "" {
		host, _ := os.Hostname()
		tag := make([]byte, 4)
		_, _ = rand.Read(tag)
		opts.Holder = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(tag))
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Backfill{opts: opts, log: log, wake: make(chan struct{}, 1)}, nil
}

// Run makes passes until ctx ends, backfillIdle apart, or at once when a reload turned the
// backfill on or changed what it embeds (Reloaded).
func (b *Backfill) Run(ctx context.Context) {
	for {
		rep := b.Pass(ctx)
		b.log.Debug("memory_backfill_pass", "facts", rep.Facts, "messages", rep.Messages, "stopped", len(rep.Stopped))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backfillIdle): // collected once it fires or is dropped (Go 1.23)
		case <-b.wake:
		}
	}
}

// Reloaded is the config watcher's callback: when the new config runs the backfill and the
// old one did not, or embeddings or memory changed (another model, a guild turned on), the
// next pass starts now instead of after the idle wait.
func (b *Backfill) Reloaded(old, updated *config.Config) {
	if !b.on(updated, "") {
		return
	}
	if b.on(old, "") && reflect.DeepEqual(old.Embeddings, updated.Embeddings) && reflect.DeepEqual(old.Memory, updated.Memory) {
		return
	}
	select {
	case b.wake <- struct{}{}:
	default: // a pass is already due
	}
}

// BackfillReport says what a pass embedded, and the guilds it stopped early, with why.
type BackfillReport struct {
	Facts, Messages int
	Stopped         map[string]string // guild → reason
}

// Pass walks every guild where embeddings, the backfill and memory are on once, embedding
// what has no embedding of the current model, and reports what it did.
func (b *Backfill) Pass(ctx context.Context) BackfillReport {
	rep := BackfillReport{Stopped: map[string]string{}}
	if !b.on(b.opts.Config(), "") {
		return rep
	}
	guilds, err := b.opts.Store.EmbeddingGuilds(ctx)
	if err != nil {
		b.log.Warn("memory_backfill_failed", "error", err.Error())
		return rep
	}
	for _, g := range guilds {
		if ctx.Err() != nil {
			break
		}
		if !b.on(b.opts.Config(), g) {
			continue
		}
		facts, msgs, reason := b.guild(ctx, g)
		rep.Facts, rep.Messages = rep.Facts+facts, rep.Messages+msgs
		if reason != "" {
			rep.Stopped[g] = reason
		}
	}
	return rep
}

// on reports whether the backfill runs for guild ("": anywhere).
func (b *Backfill) on(cfg *config.Config, guild string) bool {
	e := cfg.Embeddings
	if !e.Enabled || !e.Backfill.Enabled || !cfg.Memory.Enabled {
		return false
	}
	return guild == "" || cfg.Memory.EnabledFor(guild)
}

// guild backfills one guild, facts then messages, newest first, while this process holds its
// lease; it reports what it embedded and why it stopped early ("" when done).
func (b *Backfill) guild(ctx context.Context, guild string) (facts, msgs int, reason string) {
	defer func() {
		if err := b.opts.Store.ReleaseBackfill(context.WithoutCancel(ctx), guild, b.opts.Holder); err != nil {
			b.log.Warn("memory_backfill_failed", "guild_id", guild, "error", err.Error())
		}
		b.logEnd(guild, facts, msgs, reason)
	}()
	for _, what := range []string{"facts", "messages"} {
		n, why := b.walk(ctx, guild, what)
		if what == "facts" {
			facts = n
		} else {
			msgs = n
		}
		if why != "" {
			return facts, msgs, why
		}
	}
	return facts, msgs, ""
}

// logEnd logs a guild's pass: done (when it embedded something) or stopped.
func (b *Backfill) logEnd(guild string, facts, msgs int, reason string) {
	model := b.opts.Config().Embeddings.Model
	switch {
	case reason != "":
		b.opts.Metrics.backfillStop(reason)
		b.log.Info("memory_backfill_stopped", "guild_id", guild, "model", model, "reason", reason, "facts", facts, "messages", msgs)
	case facts+msgs > 0:
		b.log.Info("memory_backfill_done", "guild_id", guild, "model", model, "facts", facts, "messages", msgs)
	}
}

// walk embeds a guild's facts or messages page by page; it reports how many it embedded and
// why it stopped early ("" when none is left).
func (b *Backfill) walk(ctx context.Context, guild, what string) (int, string) {
	embedded := 0
	var cursor store.BackfillCursor
	for {
		cfg := b.opts.Config()
		if ctx.Err() != nil || !b.on(cfg, guild) {
			return embedded, stopOff
		}
		// A look first (one row), so that a guild with nothing left costs no turn; the page
		// itself is read after the wait, as the store has it then.
		if left, err := b.left(ctx, b.query(cfg, guild, cursor, 1), what); err != nil || !left {
			return embedded, b.failed(guild, what, err)
		}
		if err := b.waitTurn(ctx, cfg); err != nil {
			if ctx.Err() != nil {
				return embedded, stopOff
			}
			return embedded, b.failed(guild, what, err)
		}
		if b.overBudget(ctx, guild) {
			return embedded, stopBudget
		}
		now := time.Now()
		if ok, err := b.opts.Store.ClaimBackfill(ctx, guild, b.opts.Holder, now.Add(backfillLease), now); err != nil || !ok {
			if err != nil {
				return embedded, b.failed(guild, what, err)
			}
			return embedded, stopLease
		}
		n, next, err := b.page(ctx, cfg, what, b.query(cfg, guild, cursor, cfg.Embeddings.Backfill.BatchSize))
		embedded += n
		var api *llm.APIError
		switch {
		case err != nil && ctx.Err() != nil: // shutting down
			return embedded, stopOff
		case errors.Is(err, llm.ErrSpendCap):
			return embedded, stopBudget
		case errors.As(err, &api) && api.Kind == llm.ErrorKindBadRequest:
			// This page will never embed (a text the model refuses): go on past it.
			b.log.Warn("memory_backfill_failed", "guild_id", guild, "what", what, "skipped", true, "error", err.Error())
		case err != nil:
			return embedded, b.failed(guild, what, err)
		}
		if next.At.IsZero() {
			return embedded, ""
		}
		cursor = next
	}
}

// left reports whether a page (of one row) finds anything.
func (b *Backfill) left(ctx context.Context, q store.BackfillQuery, what string) (bool, error) {
	var end store.BackfillCursor
	var err error
	if what == "facts" {
		_, end, err = b.opts.Store.UnembeddedFacts(ctx, q)
	} else {
		_, end, err = b.opts.Store.UnembeddedMessages(ctx, q)
	}
	return !end.At.IsZero(), err
}

// failed logs a failure of a guild's pass and returns its stop reason ("" for no error).
func (b *Backfill) failed(guild, what string, err error) string {
	if err == nil {
		return ""
	}
	b.log.Warn("memory_backfill_failed", "guild_id", guild, "what", what, "error", err.Error())
	return stopFailed
}

// query is the page of limit rows after cursor, of the current model and (once known)
// length.
func (b *Backfill) query(cfg *config.Config, guild string, cursor store.BackfillCursor, limit int) store.BackfillQuery {
	e := cfg.Embeddings
	return store.BackfillQuery{GuildID: guild, Model: e.Model, Length: b.opts.Embedder.length(e.Model, e.Dimensions),
		NotAfter: time.Now().Add(-backfillSettle), From: cursor, Limit: limit}
}

// page embeds one page; it returns how many it embedded and where the page ended (zero: it
// was the last).
func (b *Backfill) page(ctx context.Context, cfg *config.Config, what string, q store.BackfillQuery) (int, store.BackfillCursor, error) {
	var end store.BackfillCursor
	var n int
	var made store.Embedding
	var err error
	if what == "facts" {
		var fs []store.Fact
		if fs, end, err = b.opts.Store.UnembeddedFacts(ctx, q); err != nil {
			return 0, end, err
		}
		n = len(fs)
		made, err = b.opts.Embedder.storeFacts(ctx, cfg, q.GuildID, fs)
	} else {
		var ms []store.Message
		if ms, end, err = b.opts.Store.UnembeddedMessages(ctx, q); err != nil {
			return 0, end, err
		}
		n, made, err = b.opts.Embedder.storeMessages(ctx, cfg, q.GuildID, ms)
	}
	if err != nil {
		b.opts.Metrics.backfilled(what, "failed", n)
		return 0, end, err
	}
	if n == 0 {
		return 0, end, nil
	}
	b.opts.Metrics.backfilled(what, "embedded", n)
	b.log.Debug("memory_backfill_page", "guild_id", q.GuildID, "what", what, "count", n, "model", made.Model)
	if made.Model != cfg.Embeddings.Model {
		// The budget's fallback model answered (the soft threshold was crossed meanwhile):
		// stop here; what it made is kept, and redone under the model when the day resets.
		return n, end, llm.ErrSpendCap
	}
	return n, end, nil
}

// overBudget reports whether a guild stands past a soft threshold (or a cap): the backfill is
// catch-up work, and past the threshold the budget's fallback model would answer.
func (b *Backfill) overBudget(ctx context.Context, guild string) bool {
	return b.opts.Budget != nil && b.opts.Budget.State(ctx, guild).Level >= budget.LevelSoft
}

// waitTurn waits for the next page's slot of embeddings.backfill.batchesPerMinute.
func (b *Backfill) waitTurn(ctx context.Context, cfg *config.Config) error {
	every := time.Minute / time.Duration(max(cfg.Embeddings.Backfill.BatchesPerMinute, 1))
	b.mu.Lock()
	if b.pace == nil || b.paceEvery != every {
		b.pace, b.paceEvery = store.NewRequestBudget(b.opts.Store, "memory-embedding-backfill", every), every
	}
	pace := b.pace
	b.mu.Unlock()
	wait, ok, err := pace.Reserve(ctx, time.Hour)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("memory: backfill: no slot within the hour")
	}
	if !pause(ctx, wait) {
		return ctx.Err()
	}
	return nil
}

// pause waits d, or until ctx ends (false).
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d): // collected once it fires or is dropped (Go 1.23)
		return true
	}
}
