package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Capture stores a message banter heard rather than read (a voice transcript: nothing on
// Discord keeps it) and queues it for extraction like a stored text message (Observe). What
// memory may not take is not even stored: nothing is captured where memory is off for the
// guild, of a member who paused it there, of a bot, of a blocked member or holding a ban word,
// nor what a member said before they ran forget-me (the store refuses it: logged and counted).
// It reports whether the message was stored.
func (e *Extractor) Capture(ctx context.Context, m store.Message) (bool, error) {
	cfg := e.opts.Config()
	if !cfg.Memory.EnabledFor(m.GuildID) || m.IsBot || m.IsSelf || strings.TrimSpace(m.Content) == "" {
		return false, nil
	}
	if safety.ForConfig(cfg).Exclude(m.AuthorID, m.Content, false) != safety.Allowed {
		return false, nil
	}
	if e.paused(ctx, m.GuildID, m.AuthorID) {
		return false, nil
	}
	if err := e.opts.Store.SaveMessage(ctx, m); errors.Is(err, store.ErrForgotten) {
		e.refused(m.GuildID, "message", "capture") // said before its author's forget-me, queued till after
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("memory: capture %s: %w", m.ID, err)
	}
	e.Observe(ctx, m)
	return true, nil
}

// MayCapture reports, without waiting, whether a member's words may be captured now: false
// when their pause in the guild is known to this process (a /memory pause here, or the store
// read within cacheTTL or before). A caller that captures later (Capture, off its hot path)
// asks at the moment the words were said, so that a pause then resumed never lets them in;
// Capture asks the store again.
func (e *Extractor) MayCapture(guildID, userID string) bool {
	e.mu.Lock()
	p, known := e.pauses[guildID+"\x00"+userID]
	e.mu.Unlock()
	return !known || !p.paused
}
