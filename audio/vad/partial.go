package vad

import (
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// Hooks for a speaker's owner that acts during a pause, before the utterance ends: it can
// look at the silence so far (Silence), take the utterance as it would end now (Partial) to
// start work early, and move the end of this utterance (SetEndSilence) once it knows more,
// e.g. from a transcript of the words so far.

// Partial is the chunk in progress as it would end now: the audio an EventEnd would carry if
// the silence ran on to EndSilence with no more speech, and nothing more the network hears
// (AlgorithmNeural keeps the network's hold after the member's last word: see heardTo).
type Partial struct {
	// Utterance and Chunk number it as the EventEnd that closes it will be numbered.
	Utterance uint64
	Chunk     int
	// SpeechEnd is the end of the last speech frame so far: an EventEnd with the same
	// Utterance, Chunk and SpeechEnd carries the same Audio (no speech came after), or
	// AlgorithmNeural, that Audio followed by more of the network's hold (a quiet word end
	// under noise or chatter, heard on after the partial was taken).
	SpeechEnd time.Duration
	// Audio is the chunk's audio, pre-roll and post-roll included. Owned by the
	// Endpointer and valid until the next Push (copy it to keep it).
	Audio []int16
}

// Silence returns the run of silence at the end of the utterance in progress (0 between
// utterances and while speech goes on), as the end of the utterance counts it: without the
// last frames when they may be the next word's onset (Measure.Onset).
func (e *Endpointer) Silence() time.Duration {
	if !e.active {
		return 0
	}
	return dur(uint64(e.endingSilence()))
}

// Partial returns the chunk in progress as it would end now, and whether it would be kept:
// false between utterances, before a speech frame in the chunk, and while the first chunk
// is still too short or too steady to be speech (it would end in EventDiscard). It drops the
// frames earlier events handed out, so their Audio is no longer valid.
func (e *Endpointer) Partial() (Partial, bool) {
	e.compact()
	if !e.active || e.lastSpeech < 0 || (e.chunk == 0 && e.noise()) {
		return Partial{}, false
	}
	end := min(e.heardTo(e.lastSpeech)+1+e.postN, e.bufN)
	return Partial{Utterance: e.utt, Chunk: e.chunk, SpeechEnd: dur(e.lastPos), Audio: e.buf[:end*e.fl]}, true
}

// SetEndSilence sets the silence that ends the utterance in progress (rounded down to whole
// frames, at least one); the next utterance starts with Config.EndSilence again. When the
// silence so far is already as long, the next Push ends the utterance.
func (e *Endpointer) SetEndSilence(d time.Duration) {
	e.endCur = max(1, int(d/pcm.FrameDuration))
}
