package voice

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/store"
)

// Long-term memory in voice (docs/memory.md, "Voice"): every transcript that enters the
// conversation is captured (stored as a message under store.VoiceChannelID and offered to
// extraction, off the session loop, in order), and a reply's instructions carry the facts
// of the people in the channel and of what the turn talks about, as a text turn's prompt does.

// Memory is long-term memory as a voice session uses it; *memory.Extractor implements it.
type Memory interface {
	// Capture stores a transcript and queues it for extraction, unless memory may not take
	// it (memory off in the guild, the member paused it, a blocked member, a ban word).
	Capture(ctx context.Context, m store.Message) (bool, error)
	// MayCapture reports, without waiting, whether the member's words may be captured now
	// (false when their pause is known): asked when the words enter the conversation.
	MayCapture(guildID, userID string) bool
	// Recall picks the facts to show with a turn (memory.Recall on the shared cache).
	Recall(ctx context.Context, guildID string, participants []string, text string, tokens int) ([]store.Fact, error)
}

// captureTimeout bounds one capture (the store write); captureQueue bounds the transcripts
// waiting for it.
const (
	captureTimeout = 5 * time.Second
	captureQueue   = 64
)

// capture queues a turn's transcript for memory (session loop). A member who goes on after a
// false end says one thing: the turn that continues another is stored under the first one's
// id, its words replacing the earlier part.
func (s *session) capture(t *turn) {
	mem := s.svc.opts.Memory
	if mem == nil || !s.svc.cfg().Memory.EnabledFor(s.guildID) || !mem.MayCapture(s.guildID, t.SpeakerID) {
		return
	}
	first := t
	for first.continues != nil {
		first = first.continues
	}
	at := t.SpeechEnd
	if at.IsZero() {
		at = s.svc.now()
	}
	m := store.Message{
		ID:        fmt.Sprintf("voice-%s-%d-%s", s.channel(), s.started.UnixMilli(), first.ID),
		ChannelID: store.VoiceChannelID(s.channel()), GuildID: s.guildID,
		AuthorID: t.SpeakerID, AuthorName: t.SpeakerName, Content: t.Transcript, CreatedAt: at,
	}
	select {
	case s.memCh <- m:
	default:
		s.logger().Warn("voice_memory_capture_dropped", "turn_id", t.ID, "user_id", t.SpeakerID, "reason", "queue_full")
	}
}

// captureLoop stores the queued transcripts in order; at the session's end it stores what is
// still queued, then returns.
func (s *session) captureLoop() {
	for {
		select {
		case m := <-s.memCh:
			s.capture1(m)
		case <-s.ctx.Done():
			for {
				select {
				case m := <-s.memCh:
					s.capture1(m)
				default:
					return
				}
			}
		}
	}
}

func (s *session) capture1(m store.Message) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), captureTimeout)
	defer cancel()
	stored, err := s.svc.opts.Memory.Capture(ctx, m)
	switch {
	case err != nil:
		s.logger().Warn("voice_memory_capture_failed", "message_id", m.ID, "user_id", m.AuthorID, "error", err.Error())
	case stored:
		s.logger().Debug("voice_memory_captured", "message_id", m.ID, "user_id", m.AuthorID)
	}
}

// writeMemories adds to the instructions what banter remembers of the people in the channel
// and of what the turn says, within memory.promptTokens (bounded like the personas).
func (s *session) writeMemories(ctx context.Context, b *strings.Builder, in promptInput) {
	mem, cfg := s.svc.opts.Memory, in.cfg
	if mem == nil || !cfg.Memory.EnabledFor(s.guildID) {
		return
	}
	ids := make([]string, 0, len(in.people)+1)
	if in.speakerID != "" {
		ids = append(ids, in.speakerID)
	}
	for _, p := range in.people {
		ids = append(ids, p.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, personaTimeout)
	defer cancel()
	facts, err := mem.Recall(ctx, s.guildID, ids, in.words, cfg.Memory.PromptTokens)
	if err != nil {
		s.logger().Warn("store_failed", "op", "memory_recall", "error", err.Error())
		return
	}
	if block := memory.Render(facts, s.svc.now()); block != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(block, "\n"))
	}
}
