package audio

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/vad"
)

// closedSpurt is talk's packets of speech followed by the five silence frames with which a
// Discord client closes a talk spurt before it stops sending.
func closedSpurt(t testing.TB, speech []int16, start int, seq0 uint16, ts0 uint32) ([]sent, uint16, uint32) {
	t.Helper()
	pkts, seq, ts := talk(t, speech, start, seq0, ts0, true)
	last := pkts[len(pkts)-1].tick
	for k := range 5 {
		sf := opus.SilenceFrame()
		pkts = append(pkts, sent{last + 1 + k, jitter.Packet{SSRC: 42, Seq: seq, Timestamp: ts, Payload: sf[:]}})
		seq, ts = seq+1, ts+opus.FrameSamples
	}
	return pkts, seq, ts
}

// arrive delays packets on their way: packet i by late(i) ticks, and never before the packet
// sent ahead of it (a delay spike holds back what is sent behind it).
func arrive(pkts []sent, late func(i int) int) []sent {
	out := make([]sent, len(pkts))
	for i, p := range pkts {
		p.tick += late(i)
		if i > 0 {
			p.tick = max(p.tick, out[i-1].tick)
		}
		out[i] = p
	}
	return out
}

// TestJitterHoldsTheEnd: a member says a phrase, pauses 700 ms and goes on, as a Discord client
// sends it (each spurt closed by five silence frames, nothing in the pause), and the network
// delays the packet that resumes. On a stream whose packets have come 100 ms late before (the
// jitter hold: 80 ms), a resuming packet 100 ms late does not end the utterance: one utterance.
// On a steady stream nothing is held: the end comes 800 ms after the last speech on the wall
// clock, as before; on the jittery one the hold later.
func TestJitterHoldsTheEnd(t *testing.T) {
	const pause, endSilence = 700 * ms, 800 * ms
	first, second := testaudio.Voiced(t, "hey-banter-weather.wav"), testaudio.Voiced(t, "mike-hear-me.wav")
	for _, tc := range []struct {
		name      string
		spikes    int // every 10th packet of the first phrase is this many ticks late
		resume    int // the resuming packet is this many ticks late
		maxHold   time.Duration
		wantHold  time.Duration
		wantUtter int
	}{
		{"steady, on time", 0, 0, 0, 0, 1},
		{"steady, the resuming packet 100 ms late: past the margin", 0, 5, 0, 0, 2},
		{"jittery, on time", 5, 0, 0, 80 * ms, 1},
		{"jittery, the resuming packet 100 ms late", 5, 5, 0, 80 * ms, 1},
		{"jittery, the resuming packet 60 ms late", 5, 3, 0, 80 * ms, 1},
		{"jittery, hold capped at 40 ms", 5, 0, 40 * ms, 40 * ms, 1},
		{"jittery, hold off", 5, 0, -1, 0, 1},
		{"jittery, hold off, the resuming packet 100 ms late", 5, 5, -1, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, seq, ts := closedSpurt(t, first, 0, 1, 0)
			n := len(a)
			pauseTicks := int(pause / (20 * ms))
			// the pause runs from the end of the last speech frame; the silence frames are in it
			b, _, _ := closedSpurt(t, second, a[n-6].tick+1+pauseTicks, seq, ts+uint32(pauseTicks-5)*opus.FrameSamples)
			sentPkts := append(a, b...)
			pkts := arrive(sentPkts, func(i int) int {
				switch {
				case i < n-5 && i%10 == 9:
					return tc.spikes
				case i == n:
					return tc.resume
				}
				return 0
			})
			var utterances, tick, endTick int
			var hold time.Duration
			l, err := NewListener(ListenerConfig{DirectDecode: true, MaxJitterHold: tc.maxHold, VAD: vad.Config{EndSilence: endSilence}},
				func(ev vad.Event) {
					if ev.Kind == vad.EventEnd && ev.Final {
						utterances++
						endTick = tick
					}
				}, nil)
			if err != nil {
				t.Fatal(err)
			}
			j := 0
			for tick = 0; tick <= pkts[len(pkts)-1].tick+100; tick++ {
				for j < len(pkts) && pkts[j].tick <= tick {
					l.Push(pkts[j].pkt)
					j++
				}
				if tick == pkts[n-1].tick {
					hold = l.JitterHold() // at the pause
				}
				l.Tick()
			}
			if utterances != tc.wantUtter {
				t.Errorf("%d utterances, want %d", utterances, tc.wantUtter)
			}
			if hold != tc.wantHold {
				t.Errorf("jitter hold %v at the pause, want %v", hold, tc.wantHold)
			}
			// The end on the wall clock: from the tick of the last speech packet's arrival
			// (the five silence frames follow it), EndSilence and the hold, and a tick for the
			// frame the end is found in.
			lastSpeech := pkts[len(pkts)-6].tick
			want := int((endSilence + l.JitterHold()) / (20 * ms))
			if got := endTick - lastSpeech; got < want || got > want+2 {
				t.Errorf("the utterance ended %d ticks after the last speech packet, want %d (+2)", got, want)
			}
		})
	}
}

// TestJitterHoldComesDown: the hold is the longest stall seen lately: on a steady stream it
// comes down a tick every stallDecay packets.
func TestJitterHoldComesDown(t *testing.T) {
	speech := testaudio.Voiced(t, "long-story.wav")
	pkts, _, _ := talk(t, append(append(append([]int16(nil), speech...), speech...), speech...), 0, 1, 0, false)
	if len(pkts) < 20+2*stallDecay {
		t.Fatalf("%d packets: too few for two decays", len(pkts))
	}
	pkts = arrive(pkts, func(i int) int {
		if i == 10 {
			return 6 // one spike of 120 ms, then steady
		}
		return 0
	})
	l, err := NewListener(ListenerConfig{DirectDecode: true}, func(vad.Event) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := 0
	var holds []time.Duration
	for tick := 0; j < len(pkts); tick++ {
		for j < len(pkts) && pkts[j].tick <= tick {
			l.Push(pkts[j].pkt)
			j++
			if j == 20 || j == 20+stallDecay || j == 20+2*stallDecay { // once the packets behind the spike caught up
				holds = append(holds, l.JitterHold())
			}
		}
		l.Tick()
	}
	if want := []time.Duration{100 * ms, 80 * ms, 60 * ms}; len(holds) != 3 || holds[0] != want[0] || holds[1] != want[1] || holds[2] != want[2] {
		t.Errorf("holds %v after the spike and stallDecay and twice that packets later, want %v", holds, want)
	}
	l.Flush()
	if h := l.JitterHold(); h != 0 {
		t.Errorf("hold %v after Flush, want 0: a new stream", h)
	}
}

// TestJitterHoldIgnoresWhatIsNotLate: on a steady stream, what only looks late (a duplicate
// that comes five packets on, a timestamp the sender steps back by a second, a sender that
// sends nothing for 160 ms without advancing its timestamp and then goes on at its pace)
// leaves the hold at 0, and a DTX packet in the pause after a closed talk spurt does not delay
// the end.
func TestJitterHoldIgnoresWhatIsNotLate(t *testing.T) {
	speech := testaudio.Voiced(t, "long-story.wav")
	base, seq, ts := closedSpurt(t, speech, 0, 1, 0)
	n := len(base)
	for _, tc := range []struct {
		name string
		edit func([]sent) []sent
	}{
		{"steady", func(p []sent) []sent { return p }},
		{"a duplicate five packets on", func(p []sent) []sent {
			d := p[40]
			d.tick = p[45].tick
			return append(p[:46:46], append([]sent{d}, p[46:]...)...)
		}},
		{"the timestamp stepped back a second", func(p []sent) []sent {
			for i := 60; i < len(p); i++ {
				p[i].pkt.Timestamp -= 48000
			}
			return p
		}},
		{"a gap the timestamp does not show", func(p []sent) []sent {
			for i := 60; i < len(p); i++ {
				p[i].tick += 8
			}
			return p
		}},
		{"a DTX packet in the pause", func(p []sent) []sent {
			return append(p, sent{p[len(p)-1].tick + 10, jitter.Packet{SSRC: 42, Seq: seq, Timestamp: ts + 9*opus.FrameSamples, Payload: []byte{0xF8}}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkts := tc.edit(append([]sent(nil), base...))
			var tick, endTick int
			l, err := NewListener(ListenerConfig{DirectDecode: true, VAD: vad.Config{EndSilence: 800 * ms}}, func(ev vad.Event) {
				if ev.Kind == vad.EventEnd && ev.Final {
					endTick = tick
				}
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			j := 0
			var hold time.Duration
			for tick = 0; endTick == 0 && tick < pkts[len(pkts)-1].tick+100; tick++ {
				for j < len(pkts) && pkts[j].tick <= tick {
					l.Push(pkts[j].pkt)
					j++
				}
				hold = max(hold, l.JitterHold())
				l.Tick()
			}
			if hold != 0 {
				t.Errorf("jitter hold %v, want 0", hold)
			}
			// the end: 800 ms after the last speech packet (40 ticks, the silence frames in
			// them), and a tick for the frame it is found in
			if got := endTick - pkts[n-6].tick; got < 40 || got > 41 {
				t.Errorf("ended %d ticks after the last speech packet, want 40 (+1)", got)
			}
		})
	}
}

// TestJitterHoldSlowSenderClock: a sender whose clock runs 0.05 % slow sends its packets a
// little further apart than their timestamps say; over 100 s of continuous audio that is 50 ms,
// which the measure's leak absorbs: the hold stays 0.
func TestJitterHoldSlowSenderClock(t *testing.T) {
	speech := testaudio.Voiced(t, "long-story.wav")
	var long []int16
	for len(long) < 16000*100 {
		long = append(long, speech...)
	}
	pkts, _, _ := talk(t, long, 0, 1, 0, false)
	for i := range pkts {
		pkts[i].tick += i * 5 / 10000
	}
	hold := maxHold(t, pkts)
	if hold != 0 {
		t.Errorf("jitter hold up to %v over %d packets, want 0", hold, len(pkts))
	}
}

// discordStream is what a Discord desktop client sends: spurts of speech packets (payloads
// taken in turn from speech), each closed by five silence frames, then a pause with nothing
// sent, the RTP timestamp running on through it.
func discordStream(t *testing.T, spurts, perSpurt, pauseTicks int) []sent {
	t.Helper()
	speech, _, _ := talk(t, testaudio.Voiced(t, "long-story.wav"), 0, 0, 0, false)
	var out []sent
	var seq uint16
	var ts uint32
	tick := 0
	for s := range spurts {
		for i := range perSpurt {
			out = append(out, sent{tick, jitter.Packet{SSRC: 42, Seq: seq, Timestamp: ts, Payload: speech[(s*perSpurt+i)%len(speech)].pkt.Payload}})
			seq, ts, tick = seq+1, ts+opus.FrameSamples, tick+1
		}
		for range 5 {
			sf := opus.SilenceFrame()
			out = append(out, sent{tick, jitter.Packet{SSRC: 42, Seq: seq, Timestamp: ts, Payload: sf[:]}})
			seq, ts, tick = seq+1, ts+opus.FrameSamples, tick+1
		}
		ts, tick = ts+uint32(pauseTicks)*opus.FrameSamples, tick+pauseTicks
	}
	return out
}

// holdsAt plays pkts into a listener and returns its jitter hold at the last packet of each
// spurt (the one before each run of silence frames ends).
func holdsAt(t *testing.T, pkts []sent) []time.Duration {
	t.Helper()
	l, err := NewListener(ListenerConfig{DirectDecode: true}, func(vad.Event) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var holds []time.Duration
	j := 0
	for tick := 0; j < len(pkts); tick++ {
		for j < len(pkts) && pkts[j].tick <= tick {
			l.Push(pkts[j].pkt)
			j++
			if isSilenceFrame(pkts[j-1].pkt.Payload) && (j == len(pkts) || !isSilenceFrame(pkts[j].pkt.Payload)) {
				holds = append(holds, l.JitterHold())
			}
		}
		l.Tick()
	}
	return holds
}

// TestJitterHoldOnADiscordStream: on a stream as a Discord desktop client sends it (spurts of
// 40 packets closed by silence frames, 400 ms pauses), three packets held 100 ms on the way, in
// order, are learnt wherever they fall in the spurt, the end of it too, where the packets
// queued behind them are silence frames: a hold of 80 ms at the pause. The arrival of every
// packet also wobbles by a tick (where it falls against the 20 ms clock), which alone holds
// nothing.
func TestJitterHoldOnADiscordStream(t *testing.T) {
	const perSpurt = 40
	wobble := func(i int) int { return boolTick(i%3 == 0) } // a tick late, the next on time
	for _, at := range []int{-1, 5, 20, 35, 37, 38} {
		t.Run(fmt.Sprint("burst at ", at), func(t *testing.T) {
			pkts := discordStream(t, 4, perSpurt, 20)
			spurt := perSpurt + 5
			pkts = arrive(pkts, func(i int) int {
				if k := i % spurt; i/spurt == 1 && k >= at && k < at+3 {
					return 5 // the second spurt's burst
				}
				return wobble(i)
			})
			holds := holdsAt(t, pkts)
			want := []time.Duration{0, 80 * ms, 80 * ms, 80 * ms}
			if at < 0 {
				want = []time.Duration{0, 0, 0, 0}
			}
			if !slices.Equal(holds, want) {
				t.Errorf("holds at the pauses %v, want %v", holds, want)
			}
		})
	}
}

// TestJitterHoldSenderGapWithTickPhase: a sender that sends nothing for 160 ms without
// advancing its timestamp, and then goes on at its pace, is not a late path, even when the
// arrivals wobble by a tick against the 20 ms clock (a tick late, the next on time).
func TestJitterHoldSenderGapWithTickPhase(t *testing.T) {
	pkts, _, _ := talk(t, testaudio.Voiced(t, "long-story.wav"), 0, 1, 0, false)
	for i := range pkts {
		if i >= 60 {
			pkts[i].tick += 8
		}
		pkts[i].tick += boolTick(i%3 == 0)
	}
	pkts = arrive(pkts, func(int) int { return 0 }) // in order
	hold := maxHold(t, pkts)
	if hold != 0 {
		t.Errorf("jitter hold up to %v, want 0", hold)
	}
}

func boolTick(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxHold plays pkts into a listener on the 20 ms clock (what is due is pushed, then Tick) and
// returns the largest jitter hold it had.
func maxHold(t *testing.T, pkts []sent) time.Duration {
	t.Helper()
	l, err := NewListener(ListenerConfig{DirectDecode: true}, func(vad.Event) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := 0
	var hold time.Duration
	for tick := 0; j < len(pkts); tick++ {
		for j < len(pkts) && pkts[j].tick <= tick {
			l.Push(pkts[j].pkt)
			j++
		}
		hold = max(hold, l.JitterHold())
		l.Tick()
	}
	return hold
}
