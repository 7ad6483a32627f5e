package realtime

import (
	"context"
	"fmt"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
	"github.com/banterbot/banter/voice"
)

// GeminiHearing is the voice session's model (voice.Options.LLM) when the Gemini Live API
// speaks for it: speech to text is Gemini's own input transcription (gemini.Transcriber), so
// Stage A (addressing, in both strategies) and the brain decide on the words Gemini heard, as
// they decide on OpenAI's transcription events on the other provider. Generation and speech
// stay Model's. It offers no transcription session (voice.SessionTranscriber): the session
// sends each chunk it transcribes (at a pause, at the end of speech) as one activity.
type GeminiHearing struct {
	voice.Model
	Transcriber *gemini.Transcriber
	// Gate, when set, admits each transcription before its audio is sent (the spending
	// budgets), charged to the account of ctx (voice.sttPipeline.transcription), as the
	// OpenAI transcriptions are: at a cap it is refused unless allowAtCap names that slot.
	// The Live model is fixed, so a fallback model the Gate names does not apply.
	Gate llm.Gate
	// Meter, when set, records the usage Gemini reports for each transcription (its cost
	// counted and booked to the spend ledger) to the account of ctx, as the Live replies'.
	Meter *llm.Meter
}

var _ voice.Model = GeminiHearing{}

// Transcribe implements voice.Model: the WAV's audio, as 16 kHz mono, goes to Gemini as one
// activity and its inputTranscription comes back. model and opts are not used: the Live
// model transcribes, in the language it hears.
func (h GeminiHearing) Transcribe(ctx context.Context, _ string, body []byte, _ llm.TranscribeOptions) (llm.Transcript, error) {
	if h.Gate != nil {
		model := h.Transcriber.Model()
		if _, err := h.Gate.Admit(ctx, llm.AccountFrom(ctx), model); err != nil {
			return llm.Transcript{}, fmt.Errorf("realtime: gemini hearing: %w",
				&llm.APIError{Op: llm.OpTranscribe, Model: model, Kind: llm.ErrorKindSpendCap, Err: err})
		}
	}
	samples, f, err := wav.Decode(nil, body)
	if err != nil {
		return llm.Transcript{}, fmt.Errorf("realtime: gemini hearing: %w", err)
	}
	mono, err := toFormat(samples, f, gemini16k)
	if err != nil {
		return llm.Transcript{}, fmt.Errorf("realtime: gemini hearing: %w", err)
	}
	var used func(gemini.Usage)
	if h.Meter != nil {
		account, model := llm.AccountFrom(ctx), h.Transcriber.Model()
		used = func(u gemini.Usage) { h.Meter.Record(context.Background(), account, model, meteredUsage(u)) }
	}
	text, err := h.Transcriber.TranscribeMetered(ctx, pcm.AppendBytes(nil, mono), gemini16k.Rate, used)
	if err != nil {
		return llm.Transcript{}, fmt.Errorf("realtime: gemini hearing: %w", err)
	}
	return llm.Transcript{Text: text, Duration: time.Duration(len(mono)) * time.Second / time.Duration(gemini16k.Rate)}, nil
}
