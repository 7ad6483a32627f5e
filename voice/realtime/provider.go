package realtime

import (
	"context"

	"github.com/banterbot/banter/audio/pcm"
)

// Provider names a realtime API (voice.realtime.provider).
type Provider string

// The realtime providers.
const (
	// ProviderOpenAI is the OpenAI Realtime API (llm/realtime, the Bridge). The default.
	ProviderOpenAI Provider = "openai"
	// ProviderGemini is the Gemini Live API (llm/gemini, the geminiBridge).
	ProviderGemini Provider = "gemini"
)

// provider is one realtime API's conversation for one voice session, over one socket at a
// time: the Bridge (OpenAI) or the geminiBridge. Both strategies run on either; the Responder
// is its only user and calls answer one reply at a time.
type provider interface {
	// answer plays one reply into out: for native, audio is the turn (mono, inputFormat) and
	// instructions the turn's; for brain, say is the text the model voices. A cut (ctx ends,
	// out fails) stops the model and returns what was played.
	answer(ctx context.Context, t *Turn, audio []int16, say, instructions string, out audioOut) (replyResult, error)
	// skipped logs a turn that is not forwarded.
	skipped(ctx context.Context, t *Turn, reason string)
	// remember adds a member's line of turn turnID to the summary a fresh conversation starts
	// with.
	remember(turnID, speaker, text string)
	// takeBack undoes turn turnID after a false end (the member went on; the whole comes as a
	// turn of its own): its lines leave the summary, and the provider's conversation loses the
	// turn and the answer to it (the Bridge deletes their items; the geminiBridge, which cannot
	// delete, starts a fresh session from the summary). It does not block.
	takeBack(turnID string)
	// inputFormat is the audio format the API takes.
	inputFormat() pcm.Format
	// stopped is closed when the provider has stopped (Close, the session's end, or a close
	// it does not retry).
	stopped() <-chan struct{}
	Close() error
}

var (
	_ provider = (*Bridge)(nil)
	_ provider = (*geminiBridge)(nil)
)

// answer implements provider for OpenAI: a response.create with the turn's instructions
// (native, after the audio is committed) or the speak prompt (brain).
func (b *Bridge) answer(ctx context.Context, t *Turn, audio []int16, say, instructions string, out audioOut) (replyResult, error) {
	cmd := speakCommand(t, say)
	if say == "" {
		cmd.Instructions = instructions
	}
	return b.replyTo(ctx, t, audio, cmd, out)
}

func (b *Bridge) remember(turnID, speaker, text string) { b.hist.add(turnID, speaker, text, false) }

func (b *Bridge) inputFormat() pcm.Format { return pcm.Mono24k() }

func (b *Bridge) stopped() <-chan struct{} { return b.done }
