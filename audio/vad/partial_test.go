package vad

import (
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
)

// pushAll pushes s frame by frame, calling each after every frame with the events it caused.
func pushAll(t *testing.T, e *Endpointer, s []int16, each func(evs []Event)) {
	t.Helper()
	fl := e.FrameLen()
	for off := 0; off+fl <= len(s); off += fl {
		evs, err := e.Push(s[off : off+fl])
		if err != nil {
			t.Fatal(err)
		}
		each(evs)
	}
}

// TestPartialIsTheEnd: the chunk taken during the pause is, sample for sample, the audio the
// EventEnd carries when the silence runs out with no more speech; Silence counts the pause.
func TestPartialIsTheEnd(t *testing.T) {
	e, _ := New(Config{EndSilence: 700 * ms})
	speech := testaudio.Speech16k(t, "mike-hear-me.wav")
	s := append(slices.Clone(speech), make([]int16, pcm.Speech16k().Len(time.Second))...)
	var part Partial
	var partAudio []int16
	var end *Event
	var endAudio []int16
	pushAll(t, e, s, func(evs []Event) {
		for _, ev := range evs {
			if ev.Kind == EventEnd && ev.Final {
				end = &ev
				endAudio = slices.Clone(ev.Audio)
			}
		}
		if e.Silence() >= 300*ms && partAudio == nil {
			p, ok := e.Partial()
			if !ok {
				t.Fatal("no partial during the pause at the end of speech")
			}
			part, partAudio = p, slices.Clone(p.Audio)
		}
	})
	if end == nil || partAudio == nil {
		t.Fatalf("end %v, partial %d samples", end, len(partAudio))
	}
	if part.Utterance != end.Utterance || part.Chunk != end.Chunk || part.SpeechEnd != end.SpeechEnd {
		t.Errorf("partial %d.%d speech end %v, end %d.%d speech end %v", part.Utterance, part.Chunk, part.SpeechEnd,
			end.Utterance, end.Chunk, end.SpeechEnd)
	}
	if !slices.Equal(partAudio, endAudio) {
		t.Errorf("partial audio %d samples differs from the end's %d", len(partAudio), len(endAudio))
	}
	if e.Silence() != 0 {
		t.Errorf("silence %v between utterances, want 0", e.Silence())
	}
	if _, ok := e.Partial(); ok {
		t.Error("partial between utterances")
	}
}

// TestSetEndSilence: the end moves for the utterance in progress only.
func TestSetEndSilence(t *testing.T) {
	speech := testaudio.Speech16k(t, "mike-hear-me.wav")
	tail := make([]int16, pcm.Speech16k().Len(2*time.Second))
	cases := []struct {
		name string
		set  time.Duration // at 300 ms of silence (past the 200 ms pause inside the clip); 0: not set
		want time.Duration // silence when the utterance ends
	}{
		{"fixed", 0, 700 * ms},
		{"shorter", 400 * ms, 400 * ms},
		{"already past", 100 * ms, 320 * ms}, // the next frame ends it
		{"longer", 1200 * ms, 1200 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := New(Config{EndSilence: 700 * ms})
			for round := range 2 { // the second utterance starts with EndSilence again
				var endedAt time.Duration
				set := false
				s := append(slices.Clone(speech), tail...)
				pushAll(t, e, s, func(evs []Event) {
					for _, ev := range evs {
						if ev.Kind == EventEnd && ev.Final && endedAt == 0 {
							endedAt = ev.At - ev.SpeechEnd
						}
					}
					if round == 0 && c.set > 0 && !set && e.Silence() >= 300*ms {
						e.SetEndSilence(c.set)
						set = true
					}
				})
				want := c.want
				if round == 1 {
					want = 700 * ms
				}
				if endedAt != want {
					t.Errorf("round %d: ended after %v of silence, want %v", round, endedAt, want)
				}
			}
		})
	}
}
