package voicesim

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
)

// hear runs banter's endpointer over 48 kHz stereo PCM (decimated to its 16 kHz mono) and
// returns the frames in which it confirmed speech and the utterances it ended.
func hear(t *testing.T, s []int16) (speaking, utterances int) {
	t.Helper()
	ep, err := vad.New(vad.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mono := make([]int16, len(s)/6)
	for i := range mono {
		mono[i] = int16((int(s[6*i]) + int(s[6*i+2]) + int(s[6*i+4])) / 3)
	}
	fl := ep.FrameLen()
	for off := 0; off+fl <= len(mono); off += fl {
		evs, err := ep.Push(mono[off : off+fl])
		if err != nil {
			t.Fatal(err)
		}
		if ep.Speaking() {
			speaking++
		}
		for _, e := range evs {
			if e.Kind == vad.EventEnd {
				utterances++
			}
		}
	}
	return speaking, utterances
}

// TestMusic: Music is deterministic per seed; the instrumental alone is never confirmed as
// speech by banter's endpointer (as music on an open mic is not), and a song with vocals
// holds utterances: what would start turns if whoever plays it were heard.
func TestMusic(t *testing.T) {
	const d = 12 * time.Second
	a, b := Music(d, 1, nil), Music(d, 2, nil)
	if len(a) != 2*48000*12 || !slices.Equal(a, Music(d, 1, nil)) || slices.Equal(a, b) {
		t.Fatalf("Music: %d samples, deterministic %v, seeds differ %v", len(a), slices.Equal(a, Music(d, 1, nil)), !slices.Equal(a, b))
	}
	for i, m := range [][]int16{a, b} {
		if speaking, _ := hear(t, m); speaking != 0 {
			t.Errorf("instrumental %d: %d frames confirmed as speech", i, speaking)
		}
	}
	raw, err := os.ReadFile("../../../audio/testdata/speech/hey-banter-weather.wav")
	if err != nil {
		t.Fatal(err)
	}
	v16, f, err := wav.Decode(nil, raw)
	if err != nil || f.Rate != 16000 || f.Channels != 1 {
		t.Fatalf("fixture: %v %+v", err, f)
	}
	vocals := make([]int16, 0, 6*len(v16))
	for _, x := range v16 {
		vocals = append(vocals, x, x, x, x, x, x) // 48 kHz stereo, sample and hold
	}
	if _, n := hear(t, Music(d, 1, vocals)); n < 2 {
		t.Errorf("a song with two verses: %d utterances heard, want 2 or more", n)
	}
}
