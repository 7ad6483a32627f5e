package audio

import (
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
)

// TestListenerHearsPauses: a pause between two phrases, said as a Discord client sends it (Opus,
// nothing sent in the silence), is heard as the pause and at most a frame or two more (measured:
// up to 40 ms; 60 allowed): the end of the utterance waits for the network's word on a sound that
// may be the next word's onset (vad.Measure.Onset), so the up to 120 ms the network takes to call
// a soft onset speech no longer counts as silence, and the words' quiet edges never did (the
// earlier pitch detector: up to 180 ms). So a 700 ms pause inside a sentence is heard as at most
// 740 ms and stays inside it with the 800 ms end silence (docs/voice.md, where a turn ends).
// Pairs of the speech fixtures, 400 to 700 ms apart.
func TestListenerHearsPauses(t *testing.T) {
	names := []string{"hey-banter-weather.wav", "mike-hear-me.wav", "banter-joke.wav", "two-questions.wav",
		"thats-just-banter.wav", "banter-stop.wav", "pass-the-banner.wav", "long-story.wav"}
	var worst time.Duration
	for i, a := range names {
		b := names[(i+1)%len(names)]
		for _, pause := range []time.Duration{400 * ms, 600 * ms, 700 * ms} {
			first, second := testaudio.Voiced(t, a), testaudio.Voiced(t, b)
			s := slices.Concat(make([]int16, 4800), first, make([]int16, pcm.Speech16k().Len(pause)), second)
			pkts, _, _ := talk(t, s, 0, 1, 0, true)
			var heard time.Duration
			var ends int
			l, err := NewListener(ListenerConfig{DirectDecode: true, VAD: vad.Config{EndSilence: 2 * time.Second}}, func(ev vad.Event) {
				if ev.Kind == vad.EventEnd && ev.Final {
					ends++
				}
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// the pause as the endpointer hears it: the longest silence inside the utterance
			// once the first phrase has been heard
			firstEnd := (4800 + len(first)) / 320
			last := 0
			for _, p := range pkts {
				last = max(last, p.tick)
			}
			j := 0
			for tick := 0; tick <= last+150; tick++ {
				for j < len(pkts) && pkts[j].tick <= tick {
					l.Push(pkts[j].pkt)
					j++
				}
				l.Tick()
				if tick > firstEnd-10 && tick < firstEnd+int(pause/pcm.FrameDuration)+20 {
					heard = max(heard, l.Silence())
				}
			}
			if ends != 1 {
				t.Errorf("%s, %v, %s: %d utterances, want 1", a, pause, b, ends)
			}
			d := heard - pause
			worst = max(worst, d)
			if d > 60*ms || d < -200*ms {
				t.Errorf("%s, %v, %s: the pause heard as %v (%+v)", a, pause, b, heard, d)
			}
		}
	}
	t.Logf("the longest pause heard over the pause said: %+v", worst)
}
