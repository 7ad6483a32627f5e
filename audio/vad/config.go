package vad

import (
	"fmt"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// Config tunes the detector and the endpointer. Zero fields take the
// defaults in brackets; a negative duration means zero (MinUtterance: -1
// keeps even the shortest sounds). Durations are rounded down to whole 20 ms
// frames.
type Config struct {
	// SampleRate of the mono frames pushed [16000].
	SampleRate int
	// Algorithm selects the frame classifier [AlgorithmNeural].
	Algorithm Algorithm
	// SpeechProb is the speech probability at which a frame is speech
	// (AlgorithmNeural) [0.5, Silero's own default].
	SpeechProb float64
	// HoldProb is the probability under which a frame in an utterance is
	// silence; between it and SpeechProb a frame continues an utterance but
	// does not start one (AlgorithmNeural) [0.35, Silero's own default].
	HoldProb float64

	// ThresholdDB is the absolute minimum speech level in dBFS [-50].
	ThresholdDB float64
	// MarginDB is how far above the noise floor speech must be [12].
	MarginDB float64
	// PriorFloorDB caps the floor before NoiseWindow has passed [-45]: a
	// stream that starts with steady noise below it is not speech.
	PriorFloorDB float64
	// NoiseWindow is the noise floor's minimum-tracking window [1.5 s].
	NoiseWindow time.Duration

	// StartSpeech is the run of speech frames that starts an utterance [60 ms].
	StartSpeech time.Duration
	// EndSilence is the silence that ends an utterance [700 ms].
	EndSilence time.Duration
	// MinUtterance is the shortest speech span (first to last speech frame)
	// reported; shorter ones end in EventDiscard [250 ms].
	MinUtterance time.Duration
	// MaxUtterance is the longest chunk of audio; longer speech is cut into
	// chunks, preferably at a pause in the last CutSearch [15 s].
	MaxUtterance time.Duration
	// CutSearch is how far back from MaxUtterance a cut looks for a pause [1 s].
	CutSearch time.Duration
	// PreRoll is audio kept before the first speech frame [200 ms].
	PreRoll time.Duration
	// PostRoll is audio kept after the last speech frame [100 ms].
	PostRoll time.Duration
	// SpeakingMin is the speech that makes an utterance count as someone
	// speaking (EventSpeaking, Speaking) for barge-in and coalescing [250 ms].
	SpeakingMin time.Duration
	// MinSpreadDB: an utterance whose speech-frame levels vary less than
	// this (standard deviation, dB) is steady noise or hum and is
	// discarded [2.5]; negative disables the check.
	MinSpreadDB float64
}

// Algorithm is a frame classifier.
type Algorithm int

// Algorithms.
const (
	// AlgorithmNeural (the default) hears people: Silero VAD v5, a small
	// neural network trained on real speech, noise and music (package
	// audio/silero), judges every 32 ms; the frame's level against the
	// room (the background level) tells a voice near the microphone from
	// chatter or music behind it.
	AlgorithmNeural Algorithm = iota
	// AlgorithmSpeech is the earlier hand-made detector: energy over the
	// noise floor as a first gate, then periodicity (a pitch between 60 and
	// 400 Hz) whose pitch moves like speech, not like a held note or a hum.
	// Tuned on synthesized speech: it misses unvoiced sounds and some real
	// voices, and hears melodic music (bench/vad). Kept for comparison.
	AlgorithmSpeech
	// AlgorithmEnergy is the earliest detector: energy over the noise floor
	// and the zero-crossing rate only. Kept for comparison (bench/vad) and
	// the cheapest path; music and noise 5 dB under a voice defeat it.
	AlgorithmEnergy
)

// String returns "neural", "speech" or "energy".
func (a Algorithm) String() string {
	switch a {
	case AlgorithmNeural:
		return "neural"
	case AlgorithmSpeech:
		return "speech"
	case AlgorithmEnergy:
		return "energy"
	default:
		return fmt.Sprintf("algorithm(%d)", int(a))
	}
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
		if *v < 0 {
			*v = 0
		}
	}
	if c.SampleRate == 0 {
		c.SampleRate = 16000
	}
	if c.ThresholdDB == 0 {
		c.ThresholdDB = -50
	}
	if c.MarginDB == 0 {
		c.MarginDB = 12
	}
	if c.PriorFloorDB == 0 {
		c.PriorFloorDB = -45
	}
	if c.MinSpreadDB == 0 {
		c.MinSpreadDB = 2.5
	}
	if c.SpeechProb == 0 {
		c.SpeechProb = 0.5
	}
	if c.HoldProb == 0 {
		c.HoldProb = c.SpeechProb - 0.15
	}
	def(&c.NoiseWindow, 1500*time.Millisecond)
	def(&c.StartSpeech, 60*time.Millisecond)
	def(&c.EndSilence, 700*time.Millisecond)
	def(&c.MinUtterance, 250*time.Millisecond)
	def(&c.MaxUtterance, 15*time.Second)
	def(&c.CutSearch, time.Second)
	def(&c.PreRoll, 200*time.Millisecond)
	def(&c.PostRoll, 100*time.Millisecond)
	def(&c.SpeakingMin, 250*time.Millisecond)
	return c
}

func (c Config) validate() error {
	if err := (pcm.Format{Rate: c.SampleRate, Channels: 1}).Validate(); err != nil {
		return fmt.Errorf("vad: config: %w", err)
	}
	if c.Algorithm != AlgorithmNeural && c.Algorithm != AlgorithmSpeech && c.Algorithm != AlgorithmEnergy {
		return fmt.Errorf("vad: config: algorithm %d (want %d neural, %d speech or %d energy)", int(c.Algorithm),
			AlgorithmNeural, AlgorithmSpeech, AlgorithmEnergy)
	}
	if c.SpeechProb <= 0 || c.SpeechProb >= 1 || c.HoldProb <= 0 || c.HoldProb > c.SpeechProb {
		return fmt.Errorf("vad: config: speech probability %g and hold probability %g: want 0 < hold ≤ speech < 1", c.SpeechProb, c.HoldProb)
	}
	if c.SampleRate%50 != 0 {
		return fmt.Errorf("vad: config: rate %d has no whole 20 ms frame", c.SampleRate)
	}
	if c.MaxUtterance < time.Second || c.MaxUtterance > 10*time.Minute {
		return fmt.Errorf("vad: config: max utterance %v outside 1 s..10 min", c.MaxUtterance)
	}
	if c.PreRoll+c.StartSpeech >= c.MaxUtterance/2 {
		return fmt.Errorf("vad: config: pre-roll %v too long for max utterance %v", c.PreRoll, c.MaxUtterance)
	}
	if c.EndSilence < pcm.FrameDuration || c.StartSpeech < pcm.FrameDuration {
		return fmt.Errorf("vad: config: end silence %v and start speech %v must be ≥ 20 ms", c.EndSilence, c.StartSpeech)
	}
	return nil
}

func frames(d time.Duration) int { return int(d / pcm.FrameDuration) }
