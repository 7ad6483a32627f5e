package voice

import (
	"context"

	"github.com/banterbot/banter/llm"
)

// A turn's cost: the transcription calls of its utterance (every upload or span of it,
// speculative ones included) and its Stage A classifier (voice.replyDecisionLlm) add up in
// the turn's heard tally; the reply's log line carries them with the reply's own calls
// (generation, speech) as cost_usd, a denied turn's line its heard cost alone. The speaker's
// tally is handed to the turn that ends the utterance; a session's span usage that arrives
// after that still lands in it (the same tally).

// heardTally returns the tally of the utterance the speaker is in. Hearing clock only.
func (sp *speaker) heardTally() *llm.Tally {
	if sp.heard == nil {
		sp.heard = &llm.Tally{}
	}
	return sp.heard
}

// takeHeard hands the utterance's tally to the turn that ends it; the next utterance starts
// a tally of its own. Hearing clock only.
func (sp *speaker) takeHeard() *llm.Tally {
	t := sp.heardTally()
	sp.heard = nil
	return t
}

// chargeTo returns the session's context charging its calls to the guild, slot and tally.
func (s *session) chargeTo(slot string, tally *llm.Tally) context.Context {
	return llm.WithAccount(s.ctx, llm.Account{Guild: s.guildID, Slot: slot, Tally: tally})
}

// heardUSD is what hearing and deciding on the turn cost (0 for no turn: the greeting).
func (t *turn) heardUSD() float64 {
	if t == nil {
		return 0
	}
	return t.heard.USD()
}
