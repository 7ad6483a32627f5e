// Package memory is banter's long-term memory of people: facts extracted from what members say
// (batched per channel, by the memoryLlm slot, off the reply path), the facts shown with a
// turn (Recall), and what people may ask of it (show, forget, pause). The facts live in the
// store (store.Memory). docs/memory.md.
package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Slot is the memory model slot's config path (usage accounting).
const Slot = "memoryLlm"

// Model is the extraction model. *llm.Client satisfies it.
type Model interface {
	Generate(ctx context.Context, req llm.GenerateRequest) (*llm.Result, error)
}

// Options are an Extractor's collaborators.
type Options struct {
	// Config is read for every message and every batch: reloads apply at once.
	Config  func() *config.Config
	Store   store.Store
	Model   Model
	Logger  *slog.Logger
	Metrics *Metrics
	// Embedder, when set, embeds each batch's messages and the facts stored from it (search
	// by meaning, where embeddings are on).
	Embedder *Embedder
	// CacheTTL is how long a guild's facts and members' pauses are cached when no change
	// is heard of (0: cacheTTL).
	CacheTTL time.Duration
}

// Extractor batches the messages of each channel and extracts their facts: a batch goes to the
// model when it holds memory.batchMessages messages, or after memory.quietSeconds without a
// new one. One extraction of a channel runs at a time, in order.
type Extractor struct {
	opts   Options
	cache  *Cache
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	followed chan struct{} // closed when followChanges returned

	mu     sync.Mutex // guards following
	closed bool
	chans  map[string]*channelBatch
	pauses map[string]pauseState // by guild and member: what the store said, or a command set

	cursors store.MemoryCursors // nil: the store keeps none (resume.go)
	queued  queuedSet           // the messages this process has queued, with their words
	started map[string]bool     // the channels whose cursor this process has started
}

// pauseState is a member's pause as last read (or set by /memory pause or resume).
type pauseState struct {
	paused bool
	at     time.Time
}

// maxPauseStates bounds the pauses remembered; past it they are read again.
const maxPauseStates = 100000

// channelBatch is one channel's messages waiting for extraction.
type channelBatch struct {
	pending []store.Message
	timer   *time.Timer
	// last is closed when the channel's latest started extraction has ended; the next waits
	// for it, so a channel's batches reach the model (and apply) in the order said.
	last chan struct{}
}

// New returns an Extractor; Close it to extract what is pending and stop.
func New(opts Options) (*Extractor, error) {
	if opts.Config == nil || opts.Store == nil || opts.Model == nil {
		return nil, errors.New("memory: new extractor: Config, Store and Model are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = cacheTTL
	}
	e := &Extractor{opts: opts, cache: NewCache(opts.Store, opts.CacheTTL), chans: map[string]*channelBatch{}, pauses: map[string]pauseState{},
		queued: queuedSet{}, started: map[string]bool{}}
	e.cursors, _ = store.NewMemoryCursors(opts.Store)
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.followed = make(chan struct{})
	go e.followChanges()
	return e, nil
}

// cacheTTL bounds how long recall may show facts changed by another process when the store
// could not tell (changes.go).
const cacheTTL = 5 * time.Second

// Recall is Recall on the extractor's cache of the guilds' facts.
func (e *Extractor) Recall(ctx context.Context, guildID string, participants []string, text string, tokens int) ([]store.Fact, error) {
	return Recall(ctx, e.cache, guildID, participants, text, tokens)
}

// Invalidate tells recall that a guild's facts changed ("" for every guild).
func (e *Extractor) Invalidate(guildID string) { e.cache.Invalidate(guildID) }

// Observe queues a stored message for extraction when memory is on for its guild and its
// author has not paused it, and reports whether it did (false too for a message this process
// has queued already with the same words). Bots, the bot itself and empty messages are never
// extracted; the caller stores only what the content filter allows (blocked members, ban
// words).
func (e *Extractor) Observe(ctx context.Context, m store.Message) bool {
	cfg := e.opts.Config()
	if !cfg.Memory.EnabledFor(m.GuildID) || m.IsBot || m.IsSelf || m.Deleted || strings.TrimSpace(m.Content) == "" {
		return false
	}
	if e.paused(ctx, m.GuildID, m.AuthorID) {
		return false
	}
	e.startCursor(ctx, m)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || !e.queued.add(m) {
		return false
	}
	cb := e.chans[m.ChannelID]
	if cb == nil {
		cb = &channelBatch{}
		e.chans[m.ChannelID] = cb
	}
	replaced := false
	for i, p := range cb.pending {
		if p.ID == m.ID { // an edit before extraction: the new words replace the old
			cb.pending[i], replaced = m, true
		}
	}
	if !replaced {
		cb.pending = append(cb.pending, m)
	}
	if len(cb.pending) >= cfg.Memory.BatchMessages {
		e.startLocked(m.ChannelID, cb)
		return true
	}
	if cb.timer != nil {
		cb.timer.Stop()
	}
	ch := m.ChannelID
	cb.timer = time.AfterFunc(time.Duration(cfg.Memory.QuietSeconds)*time.Second, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if !e.closed {
			e.startLocked(ch, cb)
		}
	})
	return true
}

// paused reports whether a member paused memory in a guild: from what the store said within
// cacheTTL (or a command set), else the store; a pause that cannot be read is a pause. The
// extraction asks the store again before anything reaches the model.
func (e *Extractor) paused(ctx context.Context, guild, user string) bool {
	key, now := guild+"\x00"+user, time.Now()
	e.mu.Lock()
	p, ok := e.pauses[key]
	e.mu.Unlock()
	if ok && now.Sub(p.at) < e.opts.CacheTTL {
		return p.paused
	}
	paused, err := e.opts.Store.MemoryPaused(ctx, guild, user)
	if err != nil {
		e.opts.Logger.Warn("store_failed", "op", "memory_paused", "error", err.Error())
		return true
	}
	e.NotePause(guild, user, paused)
	return paused
}

// NotePause records a member's pause (after /memory pause or resume stored it); a pause also
// drops their pending messages of the guild.
func (e *Extractor) NotePause(guild, user string, paused bool) {
	e.mu.Lock()
	if len(e.pauses) >= maxPauseStates {
		clear(e.pauses)
	}
	e.pauses[guild+"\x00"+user] = pauseState{paused: paused, at: time.Now()}
	e.mu.Unlock()
	if paused {
		e.Drop(guild, user)
	}
}

// startLocked takes a channel's pending batch and extracts it on a goroutine. e.mu is held.
func (e *Extractor) startLocked(channelID string, cb *channelBatch) {
	batch := cb.pending
	cb.pending = nil
	if cb.timer != nil {
		cb.timer.Stop()
		cb.timer = nil
	}
	if len(batch) == 0 {
		return
	}
	prev, done := cb.last, make(chan struct{})
	cb.last = done
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		e.extract(e.ctx, batch)
		e.advanceCursor(batch)
	}()
}

// Flush extracts every pending batch now and waits for every extraction in progress.
func (e *Extractor) Flush() {
	e.mu.Lock()
	for ch, cb := range e.chans {
		e.startLocked(ch, cb)
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// Drop removes a member's pending messages of a guild (paused, forgotten).
func (e *Extractor) Drop(guildID, userID string) {
	e.dropWhere(func(m store.Message) bool { return m.GuildID == guildID && m.AuthorID == userID })
}

// DropMessage removes a pending message (deleted, or edited: Observe then queues its words
// again, even when they are the same).
func (e *Extractor) DropMessage(id string) {
	e.dropWhere(func(m store.Message) bool { return m.ID == id })
	e.mu.Lock()
	delete(e.queued, id)
	e.mu.Unlock()
}

func (e *Extractor) dropWhere(gone func(store.Message) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, cb := range e.chans {
		kept := cb.pending[:0]
		for _, m := range cb.pending {
			if !gone(m) {
				kept = append(kept, m)
			}
		}
		cb.pending = kept
	}
}

// Close extracts what is pending until ctx ends, then cancels what still runs and waits.
func (e *Extractor) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { e.Flush(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("memory: close: extractions cancelled: %w", ctx.Err())
	}
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	<-done
	<-e.followed
	return err
}

// extract runs one batch: the messages still allowed, their authors' known facts, one model
// call, its answer checked and applied. A failed call or an invalid answer stores nothing.
func (e *Extractor) extract(ctx context.Context, batch []store.Message) {
	cfg := e.opts.Config()
	batch = e.allowed(ctx, cfg, batch)
	if len(batch) == 0 {
		return
	}
	guild := batch[0].GuildID
	e.opts.Embedder.Messages(ctx, guild, batch)
	known, err := e.knownFacts(ctx, cfg, guild, batch)
	if err != nil {
		e.opts.Logger.Warn("memory_extraction_failed", "guild_id", guild, "error", err.Error())
		e.opts.Metrics.extraction("failed", len(batch))
		return
	}
	ctx = llm.WithAccount(ctx, llm.Account{Guild: guild, Slot: Slot})
	res, err := e.opts.Model.Generate(ctx, extractRequest(cfg.MemoryLLM.Model, batch, known))
	if err != nil {
		e.opts.Logger.Warn("memory_extraction_failed", "guild_id", guild, "channel_id", batch[0].ChannelID, "error", err.Error())
		e.opts.Metrics.extraction("failed", len(batch))
		return
	}
	ops, err := readResult(res, shownOf(batch, known))
	if err != nil {
		e.opts.Logger.Warn("memory_extraction_invalid", "guild_id", guild, "channel_id", batch[0].ChannelID, "error", err.Error())
		e.opts.Metrics.extraction("invalid", len(batch))
		return
	}
	e.opts.Metrics.extraction("ok", len(batch))
	stored := e.apply(ctx, cfg, guild, batch, known, ops)
	e.cache.Invalidate(guild)
	e.opts.Embedder.Facts(ctx, guild, stored)
	ids := make([]string, len(batch))
	for i, m := range batch {
		ids[i] = m.ID
	}
	e.opts.Logger.Info("memory_extracted", "guild_id", guild, "channel_id", batch[0].ChannelID, "message_ids", ids, "facts", len(ops))
}

// allowed keeps the messages memory may still take: memory on for the guild, the author not
// paused, the content filter's verdict (a reload may have added a ban word) allowing it, and
// still stored (not deleted, nor forgotten by /memory forget-me since it was queued: its words
// are not sent to the model after its author asked to be forgotten).
func (e *Extractor) allowed(ctx context.Context, cfg *config.Config, batch []store.Message) []store.Message {
	batch = e.stillStored(ctx, batch)
	filter := safety.ForConfig(cfg)
	paused := map[string]bool{}
	var out []store.Message
	for _, m := range batch {
		if !cfg.Memory.EnabledFor(m.GuildID) || filter.Exclude(m.AuthorID, m.Content, false) != safety.Allowed {
			continue
		}
		p, seen := paused[m.AuthorID]
		if !seen {
			var err error
			if p, err = e.opts.Store.MemoryPaused(ctx, m.GuildID, m.AuthorID); err != nil {
				p = true
			}
			paused[m.AuthorID] = p
		}
		if !p {
			out = append(out, m)
		}
	}
	return out
}

// stillStored keeps the messages still stored, not deleted (liveSources).
func (e *Extractor) stillStored(ctx context.Context, batch []store.Message) []store.Message {
	if len(batch) == 0 {
		return nil
	}
	ids := make([]string, len(batch))
	for i, m := range batch {
		ids[i] = m.ID
	}
	live := map[string]bool{}
	for _, id := range e.liveSources(ctx, batch[0].GuildID, ids) {
		live[id] = true
	}
	out := batch[:0:0]
	for _, m := range batch {
		if live[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// knownFacts are the current facts of the batch's authors and of the server, newest first.
func (e *Extractor) knownFacts(ctx context.Context, cfg *config.Config, guild string, batch []store.Message) ([]store.Fact, error) {
	subjects := []string{store.FactServer}
	seen := map[string]bool{store.FactServer: true}
	for _, m := range batch {
		if !seen[m.AuthorID] {
			seen[m.AuthorID] = true
			subjects = append(subjects, m.AuthorID)
		}
	}
	var known []store.Fact
	for _, s := range subjects {
		fs, err := e.opts.Store.Facts(ctx, store.FactQuery{GuildID: guild, SubjectIDs: []string{s}, Limit: cfg.Memory.MaxFactsPerSubject})
		if err != nil {
			return nil, err
		}
		known = append(known, fs...)
	}
	return known, nil
}

func shownOf(batch []store.Message, known []store.Fact) shown {
	s := shown{authors: make(map[string]string, len(batch)), known: known}
	for _, m := range batch {
		s.authors[m.ID] = m.AuthorID
	}
	return s
}

// readResult reads the model's record_facts call: exactly one, with valid arguments.
func readResult(res *llm.Result, s shown) ([]Op, error) {
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != recordFactsName {
		return nil, invalid("%d tool calls, want one %s", len(res.ToolCalls), recordFactsName)
	}
	return parseAnswer(res.ToolCalls[0].Arguments, s)
}
