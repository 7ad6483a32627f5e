package memory

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/banterbot/banter/store"
)

// What a crash no longer loses (docs/memory.md): the batches waiting for extraction live in the
// process, but each channel's cursor in the store says how far extraction has read it. A
// process queues a channel's first message only after the cursor exists (started just before
// that message), and moves it past each batch when the batch is done; the next process to own
// the guild (Resume, at its GUILD_CREATE) queues the stored messages after it again.

// resumeLimit bounds the messages of one channel a resume queues again: the oldest after the
// cursor, so at most this many of a channel's messages are extracted late.
const resumeLimit = 500

// maxQueued bounds the messages remembered as queued; past it the set starts again (a message
// queued twice is then possible, and costs one more extraction of it).
const maxQueued = 200000

// queuedSet is the messages this process has queued, by id, with a hash of their words: a
// message queued again with the same words (a resume that found one a live event had queued,
// or the other way round) is not extracted twice, while an edit's new words are.
type queuedSet map[string]uint64

// add reports whether m is new (or its words are), and records it.
func (q queuedSet) add(m store.Message) bool {
	h := fnv.New64a()
	h.Write([]byte(m.Content))
	sum := h.Sum64()
	if prev, ok := q[m.ID]; ok && prev == sum {
		return false
	}
	if len(q) >= maxQueued {
		clear(q)
	}
	q[m.ID] = sum
	return true
}

// startCursor gives m's channel a cursor just before m when it has none, the first time this
// process queues a message there: from then on a crash leaves what is queued findable.
func (e *Extractor) startCursor(ctx context.Context, m store.Message) {
	if e.cursors == nil {
		return
	}
	e.mu.Lock()
	done := e.started[m.ChannelID]
	e.started[m.ChannelID] = true
	e.mu.Unlock()
	if done {
		return
	}
	if err := e.cursors.StartMemoryCursor(ctx, m.GuildID, m.ChannelID, m.CreatedAt.Add(-time.Millisecond)); err != nil {
		e.opts.Logger.Warn("store_failed", "op", "start_memory_cursor", "channel_id", m.ChannelID, "error", err.Error())
		e.mu.Lock()
		delete(e.started, m.ChannelID) // the next message tries again
		e.mu.Unlock()
	}
}

// advanceCursor moves a done batch's channel cursor past its newest message. A batch cut short
// by Close's deadline is not done: the next process extracts it.
func (e *Extractor) advanceCursor(batch []store.Message) {
	if e.cursors == nil || len(batch) == 0 || e.ctx.Err() != nil {
		return
	}
	newest := batch[0].CreatedAt
	for _, m := range batch[1:] {
		if m.CreatedAt.After(newest) {
			newest = m.CreatedAt
		}
	}
	first := batch[0]
	if err := e.cursors.AdvanceMemoryCursor(e.ctx, first.GuildID, first.ChannelID, newest); err != nil {
		e.opts.Logger.Warn("store_failed", "op", "advance_memory_cursor", "channel_id", first.ChannelID, "error", err.Error())
	}
}

// Resume queues again the stored messages of a guild's channels that no extraction has read:
// those after each channel's cursor, which a process that stopped without extracting them (a
// crash, a Close past its deadline) had queued. Call it when this process starts owning the
// guild (its GUILD_CREATE), before the live messages of its channels: they are then queued
// after the older ones, in the order said. Messages this process has queued already are not
// queued twice. It reports how many messages it queued.
func (e *Extractor) Resume(ctx context.Context, guildID string) int {
	if e.cursors == nil || !e.opts.Config().Memory.EnabledFor(guildID) {
		return 0
	}
	cursors, err := e.cursors.GuildMemoryCursors(ctx, guildID)
	if err != nil {
		e.opts.Logger.Warn("store_failed", "op", "memory_cursors", "guild_id", guildID, "error", err.Error())
		return 0
	}
	total := 0
	for _, c := range cursors {
		msgs, err := e.cursors.MessagesAfter(ctx, c.ChannelID, c.Through, resumeLimit)
		if err != nil {
			e.opts.Logger.Warn("store_failed", "op", "messages_after", "channel_id", c.ChannelID, "error", err.Error())
			continue
		}
		n := 0
		for _, m := range msgs {
			if e.Observe(ctx, m) {
				n++
			}
		}
		if n > 0 {
			e.opts.Logger.Info("memory_requeued", "guild_id", guildID, "channel_id", c.ChannelID, "messages", n,
				"after", c.Through.UTC().Format(time.RFC3339Nano), "truncated", len(msgs) == resumeLimit)
			e.opts.Metrics.resumed(n)
		}
		total += n
	}
	return total
}
