package openaisim

import (
	"bytes"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/silero"
)

// TestSynthesizeHeardBySilero: a detector trained on real voices (Silero VAD v5, banter's
// default) hears the synthesized words as speech: of the network's 32 ms chunks that lie
// inside a word, at least 90 % score 0.5 or more, for every voice and text here (the
// harmonic synthesizer before the formant one: 0–100 %, under 90 % for 18 of these 20), and
// the silence between words stays silence (digital zeros).
func TestSynthesizeHeardBySilero(t *testing.T) {
	model, err := silero.Default()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"hey banter, what's the weather like today?",
		"tell me a joke",
		"I was thinking we could order pizza tonight, what do you say?",
		"remind me to call my mother at six thirty",
		"Привет, как дела? Всё хорошо.",
	}
	for _, text := range texts {
		for _, voice := range []string{"alloy", "onyx", "nova", "echo"} {
			b := Synthesize(text, voice, 1)
			in := make([]int16, len(b)/2)
			pcm.FromBytes(in, b)
			inWord := make([]bool, len(in))
			perChar := PerCharDuration.Seconds() * SpeechRate
			for _, w := range wordSpans([]rune(text)) {
				s0, s1 := int(float64(w.start)*perChar), min(int(float64(w.end)*perChar), len(in))
				for i := s0; i < s1; i++ {
					inWord[i] = true
				}
			}
			for i, s := range in {
				if !inWord[i] && s != 0 {
					t.Fatalf("%s %q: sample %d between words is %d, want silence", voice, text, i, s)
				}
			}
			heard, chunks := speechChunks(t, model, in, inWord)
			if chunks == 0 || float64(heard) < 0.9*float64(chunks) {
				t.Errorf("%s %q: %d of %d chunks inside words heard as speech, want ≥ 90 %%", voice, text, heard, chunks)
			}
			if testing.Verbose() {
				t.Logf("%s %q: %d of %d", voice, text, heard, chunks)
			}
		}
	}
}

// speechChunks runs the network over 24 kHz speech (resampled to its 16 kHz) and counts the
// chunks wholly inside words (inWord, per 24 kHz sample), past its first 96 ms (the network's
// state warming up), and those of them scoring ≥ 0.5.
func speechChunks(t *testing.T, model *silero.Model, in []int16, inWord []bool) (heard, chunks int) {
	t.Helper()
	rs, err := resample.New(pcm.Mono24k(), pcm.Format{Rate: 16000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int16, rs.MaxOut(len(in)))
	n, err := rs.Process(out, in)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewStream()
	const warmUp = 3 * silero.ChunkSamples
	for c := 0; c+silero.ChunkSamples <= n; c += silero.ChunkSamples {
		s.Write(out[c : c+silero.ChunkSamples])
		whole := c >= warmUp
		for i := c * 3 / 2; i < (c+silero.ChunkSamples)*3/2 && i < len(inWord); i++ {
			whole = whole && inWord[i]
		}
		if whole {
			chunks++
			if s.Prob() >= 0.5 {
				heard++
			}
		}
	}
	return heard, chunks
}

// FuzzSynthesize: any text (the speech endpoint's untrusted input), voice and speed renders
// SpeechDuration of audio, deterministically, with sound if and only if it has words.
func FuzzSynthesize(f *testing.F) {
	for _, seed := range []struct {
		text, voice string
		speed       float64
	}{
		{"hey banter, what's the weather like today?", "alloy", 1},
		{"", "onyx", 1}, {"   ...!?", "nova", 0.25}, {"s", "echo", 4},
		{"strengths rhythms psst x", "fable", 1.5}, {"2026 年 ﾟ Привет Ǆ K", "", 0},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "shimmer", -1},
	} {
		f.Add(seed.text, seed.voice, seed.speed)
	}
	f.Fuzz(func(t *testing.T, text, voice string, speed float64) {
		if len(text) > 2000 || speed != speed || (speed > 0 && (speed < 0.25 || speed > 4)) {
			t.Skip("outside what the speech endpoint takes")
		}
		b := Synthesize(text, voice, speed)
		if want := 2 * int(SpeechDuration(text, speed).Seconds()*SpeechRate); len(b) != want {
			t.Fatalf("%d bytes, want %d", len(b), want)
		}
		if !bytes.Equal(b, Synthesize(text, voice, speed)) {
			t.Fatal("not deterministic")
		}
		if words := len(wordSpans([]rune(text))) > 0; words == allZeroBytes(b) {
			t.Fatalf("has words %v, all silent %v", words, allZeroBytes(b))
		}
	})
}

func allZeroBytes(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
