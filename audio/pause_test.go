package audio

import (
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/vad"
)

// TestPauseOnTheWallClock: when the speaker's packets stop (a client stops sending in
// silence), the utterance ends EndSilence after its last speech on the wall clock: the jitter
// window's ticks, spent waiting for late packets, count as silence once the window has passed.
// During the pause, Silence grows a frame a tick, and the partial chunk is the audio the end
// then carries.
func TestPauseOnTheWallClock(t *testing.T) {
	speech := testaudio.Speech16k(t, "hey-banter-weather.wav")
	pkts, _, _ := talk(t, speech, 0, 100, 4800, true) // DTX: no packets for the silent frames
	var rec recorder
	tick, endTick := 0, 0
	l, err := NewListener(ListenerConfig{DirectDecode: true}, func(ev vad.Event) {
		if ev.Kind == vad.EventEnd && ev.Final && endTick == 0 {
			endTick = tick
		}
		rec.handle(ev)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var partial []int16
	i := 0
	for tick = 0; endTick == 0 && tick < pkts[len(pkts)-1].tick+200; tick++ {
		for i < len(pkts) && pkts[i].tick <= tick {
			l.Push(pkts[i].pkt)
			i++
		}
		l.Tick()
		if i == len(pkts) && partial == nil && l.Silence() >= 300*time.Millisecond {
			p, ok := l.Partial()
			if !ok {
				t.Fatal("no partial in the pause after the last packet")
			}
			partial = append([]int16(nil), p.Audio...)
		}
	}
	if endTick == 0 {
		t.Fatalf("no end: events %s", rec.kinds())
	}
	end := rec.evs[len(rec.evs)-1]
	// Wall time from the last speech to the end: the ticks after the packet that held the
	// last speech frame.
	lastSpeech := int(end.SpeechEnd/(20*time.Millisecond)) - 1
	if got := time.Duration(endTick-lastSpeech) * 20 * time.Millisecond; got < 700*time.Millisecond || got > 720*time.Millisecond {
		t.Errorf("ended %v of wall time after the last speech frame, want 700 ms (+ one tick)", got)
	}
	if len(partial) != len(rec.audio[len(rec.audio)-1]) {
		t.Errorf("partial of %d samples, end of %d", len(partial), len(rec.audio[len(rec.audio)-1]))
	}
}
