package main

import (
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// realtimeVoiceConfig is the config TestPlaygroundRealtimeVoice's bot starts from, less the
// provider: the default (neural) speech detector. The caption the test says is the OpenAI
// simulator's synthesized speech (a formant synthesizer, sim/openai/synth.go), which the neural
// detector, trained on real voices, hears as speech: TestPlaygroundCaptionHeardWhole.
const realtimeVoiceConfig = "voice:\n  mode: realtime\n"

// TestPlaygroundCaptionHeardWhole: the caption TestPlaygroundRealtimeVoice says, as the page
// sends it (the simulator's speech at 48 kHz, in 20 ms frames from wherever the audio starts,
// frames of digital silence not sent) and the control API's stream plays it (talk spurts of
// Opus frames, one per 20 ms), is one utterance, nearly all of it heard, at every alignment
// of the speech to the frames, for the bot's listener on the test's config (the default,
// neural, detector) and on it with the pitch detector. Before the simulator's speech was
// formant-synthesized, the neural detector heard it whole at 16 of the 30 alignments.
func TestPlaygroundCaptionHeardWhole(t *testing.T) {
	speech := captionAt48k(t, "hey banter, what's the weather like today?")
	for _, tc := range []struct{ name, config string }{
		{"default", realtimeVoiceConfig},
		{"pitch", realtimeVoiceConfig + "  endpointing:\n    detector: pitch\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			v := vad.DefaultConfig() // as voice maps voice.endpointing (voice/hearing.go)
			switch cfg.Voice.Endpointing.Detector {
			case "pitch":
				v.Algorithm = vad.AlgorithmSpeech
			case "energy":
				v.Algorithm = vad.AlgorithmEnergy
			}
			v.EndSilence = time.Duration(cfg.Voice.Endpointing.SilenceMs) * time.Millisecond
			v.MinUtterance = time.Duration(cfg.Voice.Endpointing.MinUtteranceMs) * time.Millisecond
			for offset := 0; offset < 960; offset += 32 {
				ends, discards, heard := hearCaption(t, v, append(make([]int16, offset), speech...))
				if ends != 1 || discards != 0 || heard < 2*time.Second {
					t.Errorf("speech %d samples into its first frame: %d utterances, %d discarded, %v heard of %v",
						offset, ends, discards, heard, time.Duration(len(speech))*time.Second/48000)
				}
			}
		})
	}
}

// hearCaption streams mono 48 kHz audio into a listener on v and counts its utterances, its
// discards and the audio of its utterances.
func hearCaption(t *testing.T, v vad.Config, mono []int16) (ends, discards int, heard time.Duration) {
	t.Helper()
	l, err := audio.NewListener(audio.ListenerConfig{Format: pcm.Mono24k(), VAD: v, DirectDecode: true}, func(e vad.Event) {
		switch e.Kind {
		case vad.EventEnd:
			ends++
			heard += time.Duration(len(e.Audio)) * time.Second / 24000
		case vad.EventDiscard:
			discards++
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	streamCaption(t, l, mono)
	return ends, discards, heard
}

// captionAt48k is the simulator's speech for text, resampled to the page's 48 kHz.
func captionAt48k(t *testing.T, text string) []int16 {
	t.Helper()
	b := openaisim.Synthesize(text, "alloy", 1)
	in := make([]int16, len(b)/2)
	pcm.FromBytes(in, b)
	rs, err := resample.New(pcm.Mono24k(), pcm.Format{Rate: 48000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int16, rs.MaxOut(len(in)))
	n, err := rs.Process(out, in)
	if err != nil {
		t.Fatal(err)
	}
	return out[:n]
}

// streamCaption plays mono 48 kHz audio into l as the page and the control API's voice stream
// do (playground/web/voice.js, sim/discord/control/stream.go): a frame goes only when it is not
// digital silence; a talk spurt starts with 3 frames buffered, sends one Opus frame a tick, and
// ends after 10 empty ticks with 5 silence frames. One Tick a frame, then a second of ticks.
func streamCaption(t *testing.T, l *audio.Listener, mono []int16) {
	t.Helper()
	enc, err := opus.NewEncoder(opus.EncoderConfig{Application: opus.ApplicationVoIP, Bitrate: 64000})
	if err != nil {
		t.Fatal(err)
	}
	var queue [][]int16
	var seq uint16
	var ts uint32
	send := func(payload []byte) {
		seq, ts = seq+1, ts+960
		l.Push(jitter.Packet{SSRC: 1, Seq: seq, Timestamp: ts, Payload: payload})
	}
	stereo, packet := make([]int16, 2*960), make([]byte, opus.MaxPacketSize)
	talking, empty := false, 0
	frames := (len(mono) + 959) / 960
	for tick := 0; tick < frames+50; tick++ {
		if tick < frames {
			f := make([]int16, 960)
			copy(f, mono[tick*960:min(len(mono), (tick+1)*960)])
			if !allZero(f) {
				queue = append(queue, f)
			}
		}
		switch {
		case !talking && len(queue) < 3:
		case len(queue) > 0:
			talking, empty = true, 0
			for i, s := range queue[0] {
				stereo[2*i], stereo[2*i+1] = s, s
			}
			queue = queue[1:]
			n, err := enc.Encode(stereo, packet)
			if err != nil {
				t.Fatal(err)
			}
			send(append([]byte(nil), packet[:n]...))
		case empty+1 >= 10:
			for range 5 {
				send(voicesim.SilenceFrame())
			}
			talking = false
		default:
			empty++
		}
		l.Tick()
	}
}

func allZero(f []int16) bool {
	for _, s := range f {
		if s != 0 {
			return false
		}
	}
	return true
}
