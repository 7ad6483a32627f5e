package voice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// timelineCap bounds the conversation a session remembers for prompts (the prompt itself is then
// cut to context.tokenBudget).
const timelineCap = 24

// line is one thing said in the session: a member's turn (turnID), or the bot's answer to one
// (replyTo).
type line struct {
	turnID  string
	replyTo string
	decision.ContextLine
}

// PersonaLookup returns the /persona descriptions of members, keyed by user id (those without
// one are absent). store.Store implements it.
type PersonaLookup interface {
	Personas(ctx context.Context, userIDs []string) (map[string]store.UserPersona, error)
}

// ChatImageLookup finds the last image posted in a voice channel's text chat for a voice turn's
// model (images.voiceChatMinutes); *text.Service implements it. ok is false when there is none
// to show.
type ChatImageLookup interface {
	ChatImage(ctx context.Context, channelID string) (img llm.Image, caption string, ok bool)
}

// personaTimeout bounds the persona lookup of a reply: a slow store delays the answer by at
// most this (the members are then listed without descriptions).
const personaTimeout = 2 * time.Second

// promptInput is what the session loop knows when it opens the bot's turn: a snapshot of the
// conversation that the reply's goroutine renders (render) into the generation request, after
// looking up the members' personas.
type promptInput struct {
	cfg        *config.Config
	people     []decision.Participant
	lines      []decision.ContextLine
	speaker    string // the member answered
	speakerID  string
	words      string // what they said (memory recall)
	d          decision.Decision
	greeting   bool
	justJoined bool   // inside voice.joinGreetingWindowSeconds (never for a rejoined session)
	nick       string // the nickname the bot answers to in this guild ("" none)
}

// promptInput snapshots the conversation for a reply (session loop only).
func (s *session) promptInput(t *Turn, d decision.Decision, greeting bool) promptInput {
	cfg := s.svc.cfg()
	in := promptInput{cfg: cfg, people: s.others(), d: d, greeting: greeting,
		lines: make([]decision.ContextLine, len(s.timeline)), nick: s.nickname()}
	for i, l := range s.timeline {
		in.lines[i] = l.ContextLine
	}
	if t != nil {
		in.speaker, in.speakerID, in.words = t.SpeakerName, t.SpeakerID, t.Transcript
	}
	if w := cfg.Voice.JoinGreetingWindowSeconds; w > 0 && !s.rejoined && s.svc.now().Sub(s.started) < time.Duration(w)*time.Second {
		in.justJoined = true
	}
	return in
}

// render builds the generation instructions and messages for a reply: persona, voice style, the
// members in the channel with their /persona descriptions, the decision's guidance, and the
// conversation, each line cut to context.maxCharsPerMessage and the oldest lines dropped until
// the prompt fits context.tokenBudget (the last line, the turn, always stays).
func (s *session) render(ctx context.Context, in promptInput) (string, []llm.Message) {
	cfg := in.cfg
	var b strings.Builder
	if p, ok := cfg.Bot.Personas[cfg.Bot.Persona]; ok && p.Prompt != "" {
		b.WriteString(p.Prompt)
	} else {
		fmt.Fprintf(&b, "You are %s, a friendly member of a Discord server.", cfg.Bot.Name)
	}
	if in.nick != "" {
		fmt.Fprintf(&b, "\nIn this server you are called %q: people may address you by that name.", in.nick)
	}
	b.WriteString("\nYou are talking in a Discord voice channel: everything you write is spoken aloud." +
		" Answer in one to three short spoken sentences, no lists, no markdown, no emoji.")
	s.writePeople(ctx, &b, in.people)
	s.writeMemories(ctx, &b, in)
	msgs := make([]llm.Message, 0, len(in.lines)+1)
	for _, l := range in.lines {
		text := truncateRunes(l.Text, cfg.Context.MaxCharsPerMessage)
		if l.Bot {
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: text})
		} else {
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: l.Speaker + ": " + text})
		}
	}
	if in.greeting {
		b.WriteString("\nYou just joined the voice channel. Greet the people here in a few words. " + decision.SkipInstruction)
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "(" + cfg.Bot.Name + " joins the voice channel)"})
	} else {
		b.WriteString("\n")
		b.WriteString(decision.Guidance(in.d, in.speaker))
		if in.justJoined {
			b.WriteString("\nYou only just joined: a short greeting fits.")
		}
	}
	instructions := b.String()
	msgs = fitBudget(instructions, msgs, cfg.Context.TokenBudget)
	if !in.greeting {
		s.attachChatImage(ctx, msgs)
	}
	return instructions, msgs
}

// attachChatImage adds the last image of the voice channel's text chat (images.voiceChatMinutes)
// to the turn, the last user message, with a line saying who posted it: people in a call talk
// about the screenshot someone just dropped in the chat. The lookup is bounded like the personas.
func (s *session) attachChatImage(ctx context.Context, msgs []llm.Message) {
	lookup := s.svc.opts.ChatImages
	if lookup == nil || len(msgs) == 0 || msgs[len(msgs)-1].Role != llm.RoleUser {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, personaTimeout)
	defer cancel()
	img, caption, ok := lookup.ChatImage(ctx, s.channel())
	if !ok {
		return
	}
	last := &msgs[len(msgs)-1]
	last.Content += "\n(" + caption + ")"
	last.Images = append(slices.Clip(last.Images), img)
}

// writePeople lists the members in the channel: with their /persona descriptions when a
// PersonaLookup is wired (as the text prompt shows them), by name otherwise.
func (s *session) writePeople(ctx context.Context, b *strings.Builder, people []decision.Participant) {
	if len(people) == 0 {
		return
	}
	lookup := s.svc.opts.Personas
	if lookup == nil {
		b.WriteString("\nIn the channel: ")
		for i, p := range people {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name)
		}
		b.WriteByte('.')
		return
	}
	ids := make([]string, len(people))
	for i, p := range people {
		ids[i] = p.ID
	}
	lctx, cancel := context.WithTimeout(ctx, personaTimeout)
	defer cancel()
	personas, err := lookup.Personas(lctx, ids)
	if err != nil && ctx.Err() == nil {
		s.logger().Warn("voice_personas_failed", "error", err)
	}
	b.WriteString("\nIn the channel:")
	for _, p := range people {
		var pp *store.UserPersona
		if v, ok := personas[p.ID]; ok {
			pp = &v
		}
		fmt.Fprintf(b, "\n- %s: %s", p.Name, pp.Summary())
	}
}

// fitBudget drops the oldest messages until the prompt's estimated size fits budget tokens; the
// last message (the turn being answered) always stays.
func fitBudget(instructions string, msgs []llm.Message, budget int) []llm.Message {
	if budget <= 0 {
		return msgs
	}
	total := len(instructions)/4 + 12
	for _, m := range msgs {
		total += estimateTokens(m.Content)
	}
	drop := 0
	for total > budget && drop < len(msgs)-1 {
		total -= estimateTokens(msgs[drop].Content)
		drop++
	}
	return msgs[drop:]
}

// estimateTokens approximates a prompt line's size as the text pipeline does: about four
// characters per token, plus the line's overhead.
func estimateTokens(s string) int { return len(s)/4 + 12 }

// truncateRunes cuts s to at most n runes, marking the cut (n <= 0: no limit).
func truncateRunes(s string, n int) string {
	if n <= 0 || len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
