package vad

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/bench/vad/noisyset"
)

var setNames = []string{
	"hey-banter-weather.wav", "banter-joke.wav", "hey-banner-weather.wav", "pass-the-banner.wav",
	"mike-hear-me.wav", "uh-huh.wav", "thats-just-banter.wav", "long-story.wav",
	"banter-stop.wav", "two-questions.wav",
}

func loadSet(t *testing.T) [][]float32 {
	t.Helper()
	items, err := noisyset.LoadSpeech(testaudio.Dir()+"/speech", setNames)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestSpeechUnderNoise: every item of the set is heard 5 dB over pink and
// white noise, and over a fan (bench/vad measures the same through Opus).
func TestSpeechUnderNoise(t *testing.T) {
	items := loadSet(t)
	for _, kind := range []string{"pink", "fan", "keyboard"} {
		t.Run(kind, func(t *testing.T) {
			c, err := noisyset.SpeechClip(kind, 5, setNames, items, 22)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := New(Config{MinUtterance: 300 * ms})
			evs := feed(t, e, c.Samples, time.Second)
			for _, it := range c.Items {
				from := time.Duration(it.Start/noisyset.FrameLen) * pcm.FrameDuration
				to := time.Duration(it.End/noisyset.FrameLen) * pcm.FrameDuration
				heard := false
				for _, ev := range evs {
					if ev.Kind == EventEnd && ev.SpeechStart < to && ev.SpeechEnd > from {
						heard = true
					}
				}
				if !heard {
					t.Errorf("%s (%v..%v) not heard: %s", it.Name, from, to, summary(evs))
				}
			}
		})
	}
}

// TestNoiseIsNotSpeech: a minute of each noise alone gives no utterance and
// never counts as someone speaking. Babble (six far talkers) is speech and
// may make utterances, but never confirmed speech (TestBabbleNeverConfirms).
func TestNoiseIsNotSpeech(t *testing.T) {
	items := loadSet(t)
	for _, kind := range noisyset.Kinds {
		t.Run(kind, func(t *testing.T) {
			c, err := noisyset.NoiseClip(kind, 5, 60, items, 22) // bench/vad's seed: see docs/audio.md on babble
			if err != nil {
				t.Fatal(err)
			}
			e, _ := New(Config{MinUtterance: 300 * ms})
			fl := e.FrameLen()
			for off := 0; off+fl <= len(c.Samples); off += fl {
				evs, _ := e.Push(c.Samples[off : off+fl])
				for _, ev := range evs {
					if ev.Kind == EventSpeaking && kind != "babble" {
						t.Fatalf("speaking at %v", ev.At)
					}
					if ev.Kind == EventEnd && kind != "babble" {
						t.Fatalf("utterance %v..%v", ev.SpeechStart, ev.SpeechEnd)
					}
				}
			}
		})
	}
}

// TestCutChecksLikeEnd: a hum longer than MaxUtterance is discarded when
// the chunk fills, as it would be had it stopped (it used to reach STT in
// chunks).
func TestCutChecksLikeEnd(t *testing.T) {
	f := pcm.Speech16k()
	hum := make([]int16, f.Len(10*time.Second))
	for i := range hum {
		hum[i] = int16(4000 * math.Sin(float64(i)*2*math.Pi*100/16000))
	}
	e, _ := New(Config{MaxUtterance: 4 * time.Second, Algorithm: AlgorithmEnergy})
	evs := feed(t, e, hum, 2*time.Second)
	if got := summary(evs); got != "start#1.0 discard#1.0" {
		t.Errorf("events %q, want a discard and no chunk", got)
	}
}

// TestBabbleRarelyConfirms: background chatter alone seldom counts as someone speaking (it
// would interrupt the bot): six seeds of a minute of babble at 10 and 5 dB under the speech
// level, twelve minutes in all. The bound is one a minute; the earlier pitch detector
// (AlgorithmSpeech) never confirmed on these clips. The default one (AlgorithmNeural) hears
// the babble's voices as speech and tells them from a member by level against the room: at
// most once at a stream's start, before the room is known, and where the synthetic babble
// swells at a clip's end.
func TestBabbleRarelyConfirms(t *testing.T) {
	items := loadSet(t)
	for _, tc := range []struct {
		alg Algorithm
		max int // confirmations over the twelve minutes
	}{{AlgorithmSpeech, 0}, {AlgorithmNeural, 12}} {
		t.Run(tc.alg.String(), func(t *testing.T) {
			var at []string
			for seed := uint64(1); seed <= 6; seed++ {
				for _, snr := range []float64{10, 5} {
					c, err := noisyset.NoiseClip("babble", snr, 60, items, seed)
					if err != nil {
						t.Fatal(err)
					}
					e, _ := New(Config{MinUtterance: 300 * ms, Algorithm: tc.alg})
					fl := e.FrameLen()
					for off := 0; off+fl <= len(c.Samples); off += fl {
						evs, _ := e.Push(c.Samples[off : off+fl])
						for _, ev := range evs {
							if ev.Kind == EventSpeaking {
								at = append(at, fmt.Sprintf("seed %d %v dB at %v", seed, snr, ev.At))
							}
						}
					}
				}
			}
			t.Logf("%d confirmations in 12 minutes of babble alone: %v", len(at), at)
			if len(at) > tc.max {
				t.Errorf("%d confirmations, want at most %d", len(at), tc.max)
			}
		})
	}
}

// TestVoiceOverBabbleConfirms: a near talker 20 and 10 dB over the same
// chatter is still confirmed (barge-in works in a noisy room): at 20 dB all
// the items but "uh huh" and one more (the default detector; the earlier one
// all but "uh huh"). At 10 dB the chatter keeps most
// utterances open from one item to the next, so one confirmation covers
// several items and fewer transitions are counted.
func TestVoiceOverBabbleConfirms(t *testing.T) {
	items := loadSet(t)
	for _, tc := range []struct {
		snr  float64
		want int
	}{{20, 8}, {10, 2}} {
		c, err := noisyset.SpeechClip("babble", tc.snr, setNames, items, 22)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := New(Config{MinUtterance: 300 * ms})
		fl := e.FrameLen()
		// an item is confirmed if Speaking turns true while it is said (a
		// new utterance, or one that the chatter kept open)
		confirmed := map[string]bool{}
		was := false
		for off := 0; off+fl <= len(c.Samples); off += fl {
			if _, err := e.Push(c.Samples[off : off+fl]); err != nil {
				t.Fatal(err)
			}
			now := e.Speaking()
			for _, it := range c.Items {
				if now && !was && off >= it.Start && off < it.End {
					confirmed[it.Name] = true
				}
			}
			was = now
		}
		t.Logf("%v dB: %d: %v", tc.snr, len(confirmed), confirmed)
		if len(confirmed) < tc.want {
			t.Errorf("%v dB: %d items confirmed while spoken (%v), want at least %d", tc.snr, len(confirmed), confirmed, tc.want)
		}
	}
}

// TestBackground: the background level is the 20th percentile of the last
// frames (a few prior entries included), in whole dB, and forgets frames
// older than its window.
func TestBackground(t *testing.T) {
	b := newBackground(100, -45)
	if got := b.level(); got != -45 {
		t.Errorf("empty: %v, want the prior -45", got)
	}
	for i := range 100 {
		b.add(-60 + float64(i%10)) // -60..-51, ten of each
	}
	// 102 entries: the prior pair is the loudest; the 20th percentile of
	// ten levels × ten frames is the third level.
	if got := b.level(); got != -58 {
		t.Errorf("uniform -60..-51: %v, want -58", got)
	}
	for range 100 {
		b.add(-30.4)
	}
	if got := b.level(); got != -31 {
		t.Errorf("after a window of -30.4: %v, want -31 (bin floor)", got)
	}
	b.add(pcm.FloorDB)
	b.add(3) // clipped into the top bin
	if got := b.level(); got != -31 {
		t.Errorf("one silent frame moved the level: %v", got)
	}
	b.reset()
	if got := b.level(); got != -45 {
		t.Errorf("after reset: %v, want the prior", got)
	}
}
