package vad

import (
	"fmt"
	"math"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/silero"
)

// neural is AlgorithmNeural's frame classifier: Silero VAD v5 (package audio/silero) on the
// stream at 16 kHz, and the frame's level against the room.
//
// The network judges 32 ms at a time; a 20 ms frame takes the probability of the latest 32 ms
// that ended in it (or, when none did, the one before). It hears speech, not a speaker: a room
// of people talking (babble) is speech to it. What tells the member at the microphone from the
// room is level: a frame is the member's speech (ClassSpeech, Strong) when the network gives it
// at least SpeechProb and it stands need() over the background level (the level 80 % of the
// room's frames of the last 5 s exceeded); at least HoldProb and weakSlackDB less continues an
// utterance (ClassWeak: Silero's own hysteresis; in a room that talks, only within 200 ms of
// the member's speech); anything else is silence. need() grows with
// how much the room itself talks: 3 dB over a quiet or noisy room, up to 10 dB over babble.
//
// The room is what is heard between the member's utterances. Once the stream has been heard for
// confirmReadyN frames, the frames of an utterance do not update the background level or the
// room (a member who talks most of the time would otherwise become the room), unless an
// utterance has run frozenMaxN frames (the room changed). Until then the room is not known: the network alone classifies, the
// utterance is judged again at its end against the room as known then (Endpointer.neuralNoise,
// with frameMeasures), and nothing is confirmed as someone speaking.
type neural struct {
	net      *silero.Stream
	rs       *resample.Resampler // the stream's rate to 16 kHz; nil at 16 kHz
	rsOut    []int16
	on, hold float32
	// room is how much the room itself sounds like speech to the network: the share of the
	// frames at the background level it does not call silence (0 quiet or noise, 1 chatter).
	room   float32
	roomN  int // room frames seen (up to roomWindow)
	heard  int // frames that were not digital silence (up to confirmReadyN)
	frozen int // consecutive frames of an utterance, kept out of the room
	// sinceMember counts frames since the last one judged the member's speech (at most
	// weakHoldN): only within weakHoldN of it does the network's hold continue an utterance.
	sinceMember int
}

// The room's tuning (see neural).
const (
	// weakSlackDB: a frame between HoldProb and SpeechProb continues an utterance this much
	// under the level that makes a speech frame the member's.
	weakSlackDB = 3
	// roomOverDB: frames less than this over the background level are the room.
	roomOverDB = 3 // over the background level (20th percentile)
	// roomWindow: room is the mean over about the last roomWindow room frames.
	roomWindow = 25
	// roomReadyN: frames of sound heard (not digital silence) before the room is estimated
	// (1 s): the network's first second on a stream is not yet settled.
	roomReadyN = 50
	// absentDB: a frame this quiet is digital silence (no sound at all: what the Listener
	// feeds while no packets come).
	absentDB = -90
	// frozenMaxN: after an utterance has kept this many frames in a row out of the room (5 s)
	// the room takes them anyway (it may have changed: a loud room that came in over a
	// quiet one and holds the utterance open).
	frozenMaxN = 250
	// roomPrior is room before any frame: a room not heard yet may be a talking one; it
	// weighs as much as roomPriorN room frames.
	roomPrior  = 1
	roomPriorN = 10
	// talkingRoom: a room this much or more speech to the network talks (babble).
	talkingRoom = 0.5
	// roomNearDB: a room whose loud moments come within this of the speaker's voiced level
	// can be heard in the utterance (Endpointer.far).
	roomNearDB = 25
	// A speech frame is the member's this far over the background level: strongMinDB in a
	// room the network does not hear as speech, up to strongMaxDB in one it does (tuned on
	// bench/vad's real dev split and the synthetic set's babble: at 12, 41 % of the dev
	// speech 5 dB over babble went unheard; at 10, synthetic babble alone made 5 phantom
	// utterances a minute; 11 with confirmNeural 13: 9 % and 1).
	strongMinDB = 3
	strongMaxDB = 5
	// roomLoudShare: the percentile of the room's levels a voice must stand out of in a room
	// that talks.
	roomLoudShare = 0.8
)

func newNeural(c Config) (*neural, error) {
	m, err := silero.Default()
	if err != nil {
		return nil, fmt.Errorf("vad: neural detector: %w", err)
	}
	n := &neural{net: m.NewStream(), on: float32(c.SpeechProb), hold: float32(c.HoldProb), room: roomPrior,
		sinceMember: weakHoldN}
	if c.SampleRate != silero.SampleRate {
		n.rs, err = resample.New(pcm.Format{Rate: c.SampleRate, Channels: 1}, pcm.Speech16k())
		if err != nil {
			return nil, fmt.Errorf("vad: neural detector: %w", err)
		}
		n.rsOut = make([]int16, n.rs.MaxOut(c.SampleRate/50))
	}
	return n, nil
}

// classify judges one frame; m has its energy and floor.
//
// The background level and the room are what the member is not: once the room has been heard
// (confirmReadyN frames of sound), frames judged the member's speech do not update them (a
// member who talks most of the time would otherwise become the room), unless nothing has for
// memberMaxN frames (a room that changed).
func (n *neural) classify(frame []int16, bg *background, inUtterance bool, m *Measure) {
	if m.EnergyDB > absentDB && n.heard < confirmReadyN {
		n.heard++
	}
	in := frame
	if n.rs != nil {
		k, err := n.rs.Process(n.rsOut, frame)
		if err != nil { // cannot happen: rsOut holds MaxOut of a frame
			return
		}
		in = n.rsOut[:k]
	}
	n.net.Write(in)
	p := n.net.Prob()
	m.Prob = float64(p)
	m.BackgroundDB = bg.level()
	m.Prominent = m.EnergyDB >= m.BackgroundDB+prominentDB
	over := m.EnergyDB - n.reference(bg)
	need := n.need()
	if n.heard < confirmReadyN {
		// The room is not known yet (at the start of a stream the member's own voice is most
		// of what has been heard): the network alone decides; the utterance is judged
		// against the room at its end, and nothing is confirmed before.
		need = math.Inf(-1)
	}
	switch {
	case p >= n.on && over >= need:
		// speech, and it stands out of the room: the member at the microphone
		m.Class = ClassSpeech
		m.Strong = true
	case p >= n.hold && over >= need-weakSlackDB*float64(n.room) && (n.sinceMember < weakHoldN || n.room < talkingRoom):
		// the network's hold: a word's quiet end, a breath; in a room that talks, only
		// just after the member's speech (the room's own speech would hold the turn open)
		m.Class = ClassWeak
	}
	n.sinceMember = min(n.sinceMember+1, weakHoldN)
	if m.Strong {
		n.sinceMember = 0
	}
	if inUtterance && n.heard >= confirmReadyN && n.frozen < frozenMaxN {
		n.frozen++
		return
	}
	n.frozen = 0
	if n.heard > 0 {
		// digital silence before the stream's first sound is no room
		bg.add(m.EnergyDB)
	}
	if over < roomOverDB && n.heard >= roomReadyN {
		// a running mean over the first room frames (the prior counts as roomPriorN of them),
		// then over about the last roomWindow
		n.roomN = min(n.roomN+1, roomWindow)
		talk := float32(0)
		if p >= n.hold {
			talk = 1
		}
		n.room += (talk - n.room) / float32(min(n.roomN+roomPriorN, roomWindow))
	}
}

func (n *neural) reset() {
	n.net.Reset()
	n.room, n.roomN, n.heard, n.frozen, n.sinceMember = roomPrior, 0, 0, 0, weakHoldN
	if n.rs != nil {
		n.rs.Reset()
	}
}

// need is how far over the background level a speech frame must stand to be the speaker's
// now: strongMinDB in a room the network does not hear as speech, up to strongMaxDB in one
// it does.
func (n *neural) need() float64 { return strongMinDB + float64(n.room)*(strongMaxDB-strongMinDB) }

// reference is the level the member's speech must stand need() over: the background level
// (the room's 20th percentile) in a quiet or noisy room, up to the room's loud moments (its
// 80th percentile) in one that talks: a voice near the microphone is louder than the room at
// its loudest, where the room's own talkers are only now and then louder than its quiet.
func (n *neural) reference(bg *background) float64 {
	return bg.levelAt(bgShare + float64(n.room)*(roomLoudShare-bgShare))
}

// frameMeasures keeps AlgorithmNeural's measurements of the frames an Endpointer holds (the
// pre-roll ring and the utterance buffer): level and probability, so that the utterance is
// judged against the room as it is known when the judgement is made (at its end), not as it
// was known frame by frame (at the start of a stream the room is not known yet).
type frameMeasures struct {
	ringLv, ringPr []float32
	lv, pr         []float32
}

func newFrameMeasures(ring, buffered int) frameMeasures {
	return frameMeasures{ringLv: make([]float32, ring), ringPr: make([]float32, ring),
		lv: make([]float32, buffered), pr: make([]float32, buffered)}
}

func (f *frameMeasures) ring(slot int, m Measure) {
	if f.ringLv != nil {
		f.ringLv[slot], f.ringPr[slot] = float32(m.EnergyDB), float32(m.Prob)
	}
}

func (f *frameMeasures) fromRing(i, slot int) {
	if f.lv != nil {
		f.lv[i], f.pr[i] = f.ringLv[slot], f.ringPr[slot]
	}
}

func (f *frameMeasures) buffered(i int, m Measure) {
	if f.lv != nil {
		f.lv[i], f.pr[i] = float32(m.EnergyDB), float32(m.Prob)
	}
}

// shift drops the first n of the buffered frames.
func (f *frameMeasures) shift(n, buffered int) {
	if f.lv != nil {
		copy(f.lv, f.lv[n:buffered])
		copy(f.pr, f.pr[n:buffered])
	}
}

// AlgorithmNeural's utterance checks.
const (
	minSpeechN    = 10 // speech frames an utterance needs (200 ms)
	confirmNeural = 13 // member speech frames in the last second that confirm speech (Speaking)
	confirmWindow = 50 // frames of that second
	// confirmReadyN: frames of sound heard before speech is confirmed (2 s): until then the
	// room is not known well enough to stand out of.
	confirmReadyN = 100
)

// memberSpeech counts, among the buffered frames from..to, those the network calls speech
// that stand out of the room as it is known now (when the frames were classified, at the
// start of a stream, it was not known).
func (e *Endpointer) memberSpeech(from, to int) int {
	on := float32(e.cfg.SpeechProb)
	thr := float32(e.det.net.reference(e.det.bg) + e.det.net.need())
	n := 0
	for i := max(from, 0); i < to; i++ {
		if e.meas.pr[i] >= on && e.meas.lv[i] >= thr {
			n++
		}
	}
	return n
}

// neuralNoise reports whether the utterance so far is too little of the member's speech. An
// utterance that started before the room was known is judged by the network alone: at the start
// of a stream the member's first words may be all that has been heard, and the room made of them
// would judge them away.
func (e *Endpointer) neuralNoise() bool {
	if e.earlyUtt {
		n := 0
		on := float32(e.cfg.SpeechProb)
		for i := range e.bufN {
			if e.meas.pr[i] >= on {
				n++
			}
		}
		return n < minSpeechN
	}
	return e.memberSpeech(0, e.bufN) < minSpeechN
}

// neuralConfirmed reports whether the last second holds enough of the member's speech, once
// the room has been heard.
func (e *Endpointer) neuralConfirmed() bool {
	return e.det.net.heard >= confirmReadyN && e.memberSpeech(e.bufN-confirmWindow, e.bufN) >= confirmNeural
}
