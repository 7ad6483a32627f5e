package audio

import (
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
)

// TestPauseOnTheWallClock: when the speaker's client closes its talk spurt (five silence frames)
// and stops sending, the utterance ends EndSilence after its last speech on the wall clock:
// the jitter window's ticks, spent waiting for late packets, count as silence once the window
// has passed.
// During the pause, Silence grows a frame a tick, and the partial chunk is the audio the end
// then carries.
func TestPauseOnTheWallClock(t *testing.T) {
	speech := testaudio.Speech16k(t, "hey-banter-weather.wav")
	for len(speech) > 320 && pcm.EnergyDB(speech[len(speech)-320:]) < -60 { // the file's trailing silence
		speech = speech[:len(speech)-320]
	}
	pkts, seq, ts := talk(t, speech, 0, 100, 4800, false)
	// Then the client closes its talk spurt with five silence frames and stops sending.
	for k := range 5 {
		sf := opus.SilenceFrame()
		pkts = append(pkts, sent{pkts[len(pkts)-1].tick + 1, jitter.Packet{SSRC: 42, Seq: seq + uint16(k),
			Timestamp: ts + uint32(k)*opus.FrameSamples, Payload: sf[:]}})
	}
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
		if partial == nil && l.Silence() >= 300*time.Millisecond {
			p, ok := l.Partial()
			if !ok {
				t.Fatal("no partial in the pause after the speech")
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

// TestStallIsNotAPause: packets that stop mid-speech without silence frames (the network or
// the machine stalled) become silence only a tick at a time after the jitter window, as
// before: a stall is not made into a longer pause.
func TestStallIsNotAPause(t *testing.T) {
	speech := testaudio.Speech16k(t, "hey-banter-weather.wav")
	pkts, _, _ := talk(t, speech, 0, 100, 4800, false)
	l, err := NewListener(ListenerConfig{DirectDecode: true}, func(vad.Event) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts[:60] { // 1.2 s: inside the first words
		l.Push(p.pkt)
		l.Tick()
	}
	if !l.Active() || l.Silence() != 0 {
		t.Fatalf("active %v, silence %v: want speech in progress", l.Active(), l.Silence())
	}
	for range 5 { // 100 ms without packets
		l.Tick()
	}
	if got := l.Silence(); got != 40*time.Millisecond {
		t.Errorf("silence %v after a 100 ms stall, want 40 ms (the ticks after the 60 ms window)", got)
	}
}
