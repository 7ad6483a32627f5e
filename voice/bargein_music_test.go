package voice_test

import (
	"math"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// musicPCM is d of music-like tones at 48 kHz stereo: a melody of plucked
// harmonic notes every 250 ms over a held chord, about -22 dBFS: loud,
// periodic and far from steady, like music on an open mic.
func musicPCM(d time.Duration) []int16 {
	f := pcm.Discord()
	n := f.Samples(d)
	out := make([]int16, 2*n)
	notes := []float64{262, 294, 330, 392, 440, 392, 330, 294}
	chord := []float64{131, 165, 196}
	note := f.Rate / 4
	for i := range n {
		t := float64(i) / float64(f.Rate)
		k := i / note
		tn := float64(i%note) / float64(f.Rate)
		var v float64
		for h := 1; h <= 5; h++ {
			v += math.Sin(2*math.Pi*notes[k%len(notes)]*float64(h)*tn) / float64(h)
		}
		v *= 0.25 * math.Exp(-tn/0.15)
		for _, c := range chord {
			v += 0.04 * (math.Sin(2*math.Pi*c*t) + 0.5*math.Sin(4*math.Pi*c*t))
		}
		s := pcm.Clamp16(float32(v * 8000))
		out[2*i], out[2*i+1] = s, s
	}
	return out
}

// TestBargeInIgnoresMusic: music on a member's open mic while the bot
// talks does not interrupt it: barge-in needs confirmed speech, not sound.
func TestBargeInIgnoresMusic(t *testing.T) {
	t.Parallel()
	reply := "It will be sunny all day, with a light breeze from the west and a warm evening."
	rules := append(transcriptByLength("banter, can you hear me?", "hey banter, what's the weather like today?"),
		weatherRules(reply, "Sure.")...)
	w := newWorld(t, func(c *config.Config) { c.Voice.BargeIn.Policy = "anyone" }, rules...)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	wait := w.talkOver(alice, "hey-banter-weather", 25, bob, musicPCM(openaisim.SpeechDuration(reply, 1)+time.Second))
	defer wait()
	w.waitLog(`"msg":"stt_pipeline_reply_`)
	if n := w.logs.Count(`"msg":"voice_barge_in"`); n != 0 {
		t.Errorf("%d barge-ins on music", n)
	}
	if w.logs.Count(`"msg":"stt_pipeline_reply_spoken"`) != 1 {
		t.Error("the reply was not spoken to the end")
	}
}
