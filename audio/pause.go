package audio

import (
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
)

// Silence returns the silence at the end of the utterance in progress (0 between utterances
// and while the speaker talks): see vad.Endpointer.Silence.
func (l *Listener) Silence() time.Duration { return l.ep.Silence() }

// Partial returns the chunk in progress as it would end now, for work started during a
// pause (see vad.Endpointer.Partial). Its Audio is valid until the next Push, Tick or Flush.
func (l *Listener) Partial() (vad.Partial, bool) { return l.ep.Partial() }

// SetEndSilence moves the end of the utterance in progress: it ends after d of silence
// instead of the configured EndSilence (see vad.Endpointer.SetEndSilence). A gap in the
// packets is filled with up to that much silence.
func (l *Listener) SetEndSilence(d time.Duration) {
	l.ep.SetEndSilence(d)
	l.gapN = max(l.gapN, int((d+l.ep.Config().PreRoll)/pcm.FrameDuration)+1)
}
