package vad

import (
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
// never counts as someone speaking. Babble (six far talkers) is speech: it
// is only measured by bench/vad (it can confirm, about once a minute).
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
