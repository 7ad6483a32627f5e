package vad

import (
	"fmt"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/silero"
)

// neural is AlgorithmNeural's frame classifier: Silero VAD v5 (package audio/silero) on the
// stream at 16 kHz, plus the frame's level against the room.
//
// The network judges 32 ms at a time; a 20 ms frame takes the probability of the latest 32 ms
// that ended in it (or, when none did, the one before). A probability of at least SpeechProb is
// speech, at least HoldProb continues an utterance (weak), under it is silence: Silero's own
// hysteresis. The network hears speech, not a speaker: a room of people talking (babble), a
// voice on a video or a singer is speech to it. What tells the member at the microphone from the
// room is level: a speech frame that stands prominentDB over the background level (the level 80 %
// of the last 5 s exceeded) is strong, and an utterance must have enough strong frames to be kept
// and to count as someone speaking (Endpointer.noise, confirmed).
type neural struct {
	net      *silero.Stream
	rs       *resample.Resampler // the stream's rate to 16 kHz; nil at 16 kHz
	rsOut    []int16
	on, hold float32
	// room is how much the room itself sounds like speech to the network: the share of the
	// frames at the background level it does not call silence (0 quiet or noise, 1 chatter).
	room  float32
	roomN int // room frames seen (up to roomWindow)
	heard int // frames that were not digital silence (up to bgReadyN)
}

// The room's tuning (see neural).
const (
	// weakOverDB: a frame between HoldProb and SpeechProb continues an utterance only this
	// far over the background level.
	weakOverDB = 3
	// roomOverDB: frames less than this over the background level are the room.
	roomOverDB = 3
	// roomWindow: room is the mean over about the last roomWindow room frames.
	roomWindow = 25
	// bgReadyN: frames of sound heard (not digital silence) before speech is confirmed
	// (1 s): until then there is no room to stand out of.
	bgReadyN = 50
	// absentDB: a frame this quiet is digital silence (no sound at all: what the Listener
	// feeds while no packets come).
	absentDB = -90
	// roomPrior is room before any frame: a room not heard yet may be a talking one; it
	// weighs as much as roomPriorN room frames.
	roomPrior  = 1
	roomPriorN = 10
	// A speech frame is strong this far over the background level: strongMinDB in a room
	// the network does not hear as speech, up to strongMaxDB in one it does.
	strongMinDB = 3
	strongMaxDB = 12
)

func newNeural(c Config) (*neural, error) {
	m, err := silero.Default()
	if err != nil {
		return nil, fmt.Errorf("vad: neural detector: %w", err)
	}
	n := &neural{net: m.NewStream(), on: float32(c.SpeechProb), hold: float32(c.HoldProb), room: roomPrior}
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
func (n *neural) classify(frame []int16, bg *background, m *Measure) {
	if m.EnergyDB > absentDB && n.heard < bgReadyN {
		n.heard++
	}
	if n.heard > 0 {
		// digital silence before the stream's first sound is no room
		bg.add(m.EnergyDB)
	}
	m.BackgroundDB = bg.level()
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
	m.Prominent = m.EnergyDB >= m.BackgroundDB+prominentDB
	over := m.EnergyDB - m.BackgroundDB
	if over < roomOverDB && n.heard > 0 {
		// a running mean over the first room frames (the prior counts as roomPriorN of them),
		// then over about the last roomWindow
		n.roomN = min(n.roomN+1, roomWindow)
		talk := float32(0)
		if p >= n.hold {
			talk = 1
		}
		n.room += (talk - n.room) / float32(min(n.roomN+roomPriorN, roomWindow))
	}
	switch {
	case p >= n.on:
		m.Class = ClassSpeech
		// A voice must stand out of a room that talks (babble) by more than out of a quiet
		// or merely noisy one.
		m.Strong = over >= n.need()
	case p >= n.hold && m.EnergyDB >= m.BackgroundDB+weakOverDB:
		// The network's probability falls slowly after speech stops (its memory): a frame
		// it is unsure of that is no louder than the room is the pause, not the word.
		m.Class = ClassWeak
	}
}

func (n *neural) reset() {
	n.net.Reset()
	n.room, n.roomN, n.heard = roomPrior, 0, 0
	if n.rs != nil {
		n.rs.Reset()
	}
}

// need is how far over the background level a speech frame must stand to be the speaker's
// now: strongMinDB in a room the network does not hear as speech, up to strongMaxDB in one
// it does.
func (n *neural) need() float64 { return strongMinDB + float64(n.room)*(strongMaxDB-strongMinDB) }

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
	minStrong     = 5  // strong frames (speech standing out of the room) an utterance needs
	strongShare   = 4  // 1 in strongShare of its speech frames must be strong
	confirmNeural = 10 // strong frames in the last second that confirm speech (Speaking)
	confirmWindow = 50 // frames of that second
)

// strongIn counts, among buffered frames from..to, the speech frames and those that stand out
// of the room as it is known now.
func (e *Endpointer) strongIn(from, to int) (speech, strong int) {
	on := float32(e.cfg.SpeechProb)
	thr := float32(e.det.bg.level() + e.det.net.need())
	for i := max(from, 0); i < to; i++ {
		if e.meas.pr[i] >= on {
			speech++
			if e.meas.lv[i] >= thr {
				strong++
			}
		}
	}
	return speech, strong
}

// neuralNoise reports whether the utterance so far is not someone at the microphone: the
// network heard speech, but too little of it stands out of the room (chatter or music
// behind the member, or a stream that is all room).
func (e *Endpointer) neuralNoise() bool {
	speech, strong := e.strongIn(0, e.bufN)
	return strong < minStrong || strong*strongShare < speech
}

// neuralConfirmed reports whether the last second holds enough speech standing out of the
// room, and enough of its speech does.
func (e *Endpointer) neuralConfirmed() bool {
	if e.det.net.heard < bgReadyN {
		return false
	}
	speech, strong := e.strongIn(e.bufN-confirmWindow, e.bufN)
	return strong >= confirmNeural && strong*strongShare >= speech
}
