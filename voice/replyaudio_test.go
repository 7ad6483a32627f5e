package voice_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/internal/speechscore"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestReplyAudioSameAtTTSRate: a reply encoded from the TTS audio as it
// arrives (24 kHz mono, the default since issue 24) sounds to a member (the
// simulator's 48 kHz stereo decoder, as a Discord client) as good as the
// earlier path, which resampled and upmixed it to 48 kHz stereo before
// encoding: the same number of frames, and scored against the speech the
// OpenAI simulator synthesized for it, a log-spectral distance at most 0.5 dB
// worse and a segmental SNR at most 1 dB worse (bench/voice/encoder on the
// speech fixtures: 5.82 against 6.48 dB LSD, 18.4 against 16.4 dB segSNR,
// the new path better on both).
func TestReplyAudioSameAtTTSRate(t *testing.T) {
	const reply = "It is sunny and warm today, with a light breeze from the sea."
	paths := []struct {
		name string
		enc  opus.EncoderConfig
	}{
		{"48 kHz stereo (earlier)", opus.EncoderConfig{Rate: 48000, Channels: 2}},
		{"TTS format", opus.EncoderConfig{}},
	}
	var heard [2][]int16
	var speech []openaisim.Recorded // the reply's TTS requests, a sentence each
	for i, p := range paths {
		w := newWorldWith(t, worldOptions{encoder: p.enc}, nil, genRule(reply))
		alice := w.member("alice")
		w.join()
		w.osim.QueueTranscripts("hey banter, what's the weather like today?")
		w.play(alice, "hey-banter-weather")
		w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
		for alice.Stats().Silence < 5 { // the spurt's silence frames: the reply is all in
			select {
			case <-w.ctx.Done():
				t.Fatalf("%s: the reply's silence frames never came", p.name)
			case <-time.After(10 * time.Millisecond):
			}
		}
		heard[i] = alice.HeardPCM(w.botID)
		speech = w.osim.RequestsFor(openaisim.EndpointSpeech)
	}
	if len(heard[0]) == 0 || len(heard[0]) != len(heard[1]) {
		t.Fatalf("heard %d values on the earlier path, %d on the new one", len(heard[0]), len(heard[1]))
	}
	// What the bot was sent to say: the sentences' synthesized speech in
	// the order of the reply.
	slices.SortFunc(speech, func(a, b openaisim.Recorded) int {
		return strings.Index(reply, a.LastUserText) - strings.Index(reply, b.LastUserText)
	})
	var tts []int16
	for _, r := range speech {
		b := openaisim.Synthesize(r.LastUserText, r.Voice, 1)
		tts = append(tts, make([]int16, len(b)/2)...)
		pcm.FromBytes(tts[len(tts)-len(b)/2:], b)
	}
	rs, err := resample.New(pcm.Mono24k(), pcm.Discord())
	if err != nil {
		t.Fatal(err)
	}
	ref := make([]int16, rs.MaxOut(len(tts)))
	n, err := rs.Process(ref, tts)
	if err != nil {
		t.Fatal(err)
	}
	refMono := speechscore.Mono(ref[:n])
	oldLSD, oldSNR := speechscore.Score(refMono, speechscore.Mono(heard[0]))
	newLSD, newSNR := speechscore.Score(refMono, speechscore.Mono(heard[1]))
	t.Logf("LSD %.2f → %.2f dB, segmental SNR %.1f → %.1f dB (earlier path → TTS format)", oldLSD, newLSD, oldSNR, newSNR)
	if oldLSD > 10 || oldSNR < 5 {
		t.Fatalf("the earlier path scores LSD %.2f dB, SNR %.1f dB against the synthesized speech: not the reply's audio?", oldLSD, oldSNR)
	}
	if newLSD > oldLSD+0.5 || newSNR < oldSNR-1 {
		t.Errorf("encoded at the TTS format: LSD %.2f dB (earlier %.2f), SNR %.1f dB (earlier %.1f); want at most 0.5 dB more LSD and 1 dB less SNR",
			newLSD, oldLSD, newSNR, oldSNR)
	}
}
