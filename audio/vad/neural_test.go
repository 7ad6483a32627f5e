package vad

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
)

// silenceOf returns d of digital silence at 16 kHz.
func silenceOf(d time.Duration) []int16 { return make([]int16, pcm.Speech16k().Len(d)) }

// TestNeuralPauseIsNotAnEnd: a pause inside a sentence shorter than EndSilence does not split
// it; one longer does. The network's hold after a word and its onset at the next one make the
// silence it measures no longer than the pause itself.
func TestNeuralPauseIsNotAnEnd(t *testing.T) {
	first := testaudio.Voiced(t, "hey-banter-weather.wav")
	second := testaudio.Voiced(t, "mike-hear-me.wav")
	for _, tc := range []struct {
		pause time.Duration
		utts  int
	}{{400 * ms, 1}, {600 * ms, 1}, {700 * ms, 1}, {1000 * ms, 2}} {
		e, _ := New(Config{EndSilence: 800 * ms})
		s := slices.Concat(silenceOf(300*ms), first, silenceOf(tc.pause), second)
		evs := feed(t, e, s, 2*time.Second)
		ends := 0
		for _, ev := range evs {
			if ev.Kind == EventEnd && ev.Final {
				ends++
			}
		}
		if ends != tc.utts {
			t.Errorf("pause %v: %d utterances (%s), want %d", tc.pause, ends, summary(evs), tc.utts)
		}
	}
}

// TestNeuralEndsOnTime: the end of an utterance comes EndSilence after the speech stops, within
// the network's hold (about 100 ms), and its audio holds the whole item.
func TestNeuralEndsOnTime(t *testing.T) {
	for _, name := range []string{"long-story.wav", "banter-joke.wav", "two-questions.wav"} {
		item := testaudio.Voiced(t, name)
		e, _ := New(Config{EndSilence: 700 * ms})
		lead := 400 * ms
		evs := feed(t, e, slices.Concat(silenceOf(lead), item), 2*time.Second)
		var end *collected
		for i := range evs {
			if evs[i].Kind == EventEnd && evs[i].Final {
				end = &evs[i]
			}
		}
		if end == nil {
			t.Fatalf("%s: no end (%s)", name, summary(evs))
		}
		stop := lead + pcm.Speech16k().Duration(len(item))
		if late := end.At - stop; late < 700*ms-60*ms || late > 700*ms+160*ms {
			t.Errorf("%s: ended %v after the speech stopped, want 700 ms plus the hold", name, late)
		}
		if from, to := end.AudioStart, end.AudioStart+pcm.Speech16k().Duration(len(end.audio)); from > lead || to < stop {
			t.Errorf("%s: audio %v-%v, want all of %v-%v", name, from, to, lead, stop)
		}
	}
}

// TestNeuralNotVoice: sounds the network does not take for speech never make an utterance:
// a steady hum with harmonics, a held organ-like chord, white noise.
func TestNeuralNotVoice(t *testing.T) {
	n := pcm.Speech16k().Len(4 * time.Second)
	hum, chord, noise := make([]int16, n), make([]int16, n), addNoise(make([]int16, n), -30)
	for i := range n {
		x := float64(i) / 16000
		for h := 1; h <= 5; h++ {
			hum[i] += int16(2000 / float64(h) * math.Sin(2*math.Pi*60*float64(h)*x))
		}
		for _, f := range []float64{261.6, 329.6, 392} {
			chord[i] += int16(2500 * math.Sin(2*math.Pi*f*x))
		}
	}
	for name, s := range map[string][]int16{"hum": hum, "chord": chord, "noise": noise} {
		e, _ := New(Config{})
		for _, ev := range feed(t, e, s, time.Second) {
			if ev.Kind == EventEnd || ev.Kind == EventSpeaking {
				t.Errorf("%s: %v at %v", name, ev.Kind, ev.At)
			}
		}
	}
}

// TestNeuralMonologueIsNotTheRoom: a member who talks most of the time does not become the
// room: after a minute of near-continuous speech (items 150 ms apart, from the stream's first
// sound), a short question is still kept and confirmed.
func TestNeuralMonologueIsNotTheRoom(t *testing.T) {
	var s []int16
	for len(s) < pcm.Speech16k().Len(time.Minute) {
		for _, name := range setNames {
			s = slices.Concat(s, testaudio.Voiced(t, name), silenceOf(150*ms))
		}
	}
	e, _ := New(Config{EndSilence: 700 * ms})
	feed(t, e, s, 2*time.Second)
	evs := feed(t, e, testaudio.Voiced(t, "banter-stop.wav"), 2*time.Second)
	if got := summary(evs); got == "" || evs[len(evs)-1].Kind != EventEnd {
		t.Fatalf("the question after the monologue: %q, want it kept", got)
	}
	confirmed := false
	for _, ev := range evs {
		confirmed = confirmed || ev.Kind == EventSpeaking
	}
	if !confirmed {
		t.Errorf("the question after the monologue was not confirmed: %s", summary(evs))
	}
}

// TestNeuralFirstWordsKept: the first utterance of a stream, before the room is known, is kept
// and can be confirmed (a member talking over the bot the first time they speak).
func TestNeuralFirstWordsKept(t *testing.T) {
	e, _ := New(Config{})
	evs := feed(t, e, testaudio.Speech16k(t, "two-questions.wav"), time.Second)
	if got := summary(evs); got != "start#1.0 speaking#1.0 end#1.0F" {
		t.Errorf("events %q, want the first words kept and confirmed", got)
	}
}

// TestNeuralKeepsQuietWordEnds: a sentence whose last word trails off under steady noise
// (its last 500 ms 20 dB quieter, under the noise's level) keeps that word in its audio: the
// network still hears it, so the audio runs on until the network stops hearing speech, though
// the frames no longer stand out of the room (the end of the turn is still decided by the
// member's speech).
func TestNeuralKeepsQuietWordEnds(t *testing.T) {
	for _, name := range []string{"hey-banter-weather.wav", "long-story.wav", "banter-joke.wav"} {
		item := slices.Clone(testaudio.Voiced(t, name))
		soft := pcm.Speech16k().Len(500 * ms)
		for i := len(item) - soft; i < len(item); i++ {
			item[i] = int16(float64(item[i]) * 0.1) // -20 dB
		}
		lead := 3 * time.Second
		s := addNoise(slices.Concat(silenceOf(lead), item, silenceOf(2*time.Second)), -40)
		e, _ := New(Config{EndSilence: 900 * ms})
		var end *collected
		evs := feed(t, e, s, 0)
		for i := range evs {
			if evs[i].Kind == EventEnd && evs[i].Final {
				end = &evs[i]
			}
		}
		if end == nil {
			t.Fatalf("%s: no utterance (%s)", name, summary(evs))
		}
		stop := lead + pcm.Speech16k().Duration(len(item))
		if to := end.AudioStart + pcm.Speech16k().Duration(len(end.audio)); to < stop {
			t.Errorf("%s: audio ends %v before the sentence does", name, stop-to)
		}
	}
}
