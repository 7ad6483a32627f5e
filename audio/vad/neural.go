package vad

import (
	"fmt"
	"math"
	"math/bits"

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
// the member's speech); anything else is silence. need() and reference() grow with how much the
// room itself talks: 3 dB over the room's 20th percentile in a quiet or noisy room, up to 5 dB
// over its 80th percentile in one that talks (babble).
//
// The room is what is heard between the member's utterances and in their pauses: the other
// frames of an utterance do not update the background level or the room (a member who talks most
// of the time would otherwise become the room), unless an utterance has gone frozenMaxN frames
// without a pause (the room changed, or a room that talks held the stream's first utterance
// open); nor do runs of speech just under the member's level outside an utterance
// (maybeMember). Until the room has taken roomReadyN frames (or a steady start, steadyRoom)
// it is not known: the network alone classifies, an utterance that ends before it is known is
// kept on the network's word alone (Endpointer.neuralNoise), and speech counts as the member's
// for confirmation only over earlyFloorDB (a voice at the microphone).
type neural struct {
	net      *silero.Stream
	rs       *resample.Resampler // the stream's rate to 16 kHz; nil at 16 kHz
	rsOut    []int16
	on, hold float32
	// thresholdDB is Config.ThresholdDB: an Onset frame before the room is known is over it
	thresholdDB float64
	prevDB      float64 // the previous frame's level
	// room is how much the room itself sounds like speech to the network: the share of the
	// frames at the background level it does not call silence (0 quiet or noise, 1 chatter).
	room   float32
	roomN  int // room frames seen (up to roomWindow)
	heard  int // frames the room has taken (up to roomReadyN)
	sound  int // 1 once the stream's first sound (not digital silence) came
	frozen int // consecutive frames of an utterance, kept out of the room
	// sinceMember counts frames since the last one judged the member's speech (at most
	// weakHoldN): only within weakHoldN of it does the network's hold continue an utterance.
	sinceMember int
	near        uint64 // the last frames: bit set for one near the member's level (maybeMember)
	// first holds the levels of the stream's first steadyN frames of sound (while the room is
	// not known), firstN of them, firstTalk of those speech to the network: a steady start
	// is the room (steadyRoom).
	first     [bgBins]uint8
	firstN    int
	firstTalk int
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
	// roomReadyN: frames the room must have taken (1 s) before it is known.
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
	// A speech frame is the member's this far over the reference (see reference):
	// strongMinDB in a room the network does not hear as speech, up to strongMaxDB in one it
	// does. Tuned on bench/vad's real dev split and the synthetic set's babble: over the
	// room's 80th percentile, 3 dB let babble alone make 5 phantom utterances a minute and 4
	// made 2; 5 makes at most one, at the cost of speech 5 dB over babble (dev: 6 % unheard).
	strongMinDB = 3
	strongMaxDB = 5
	// onsetOverDB: a silent frame this much louder than one that would be the member's speech
	// may be the onset of their next word (Measure.Onset).
	onsetOverDB = 6
	// onsetFallDB: an Onset frame is at most this much quieter than the frame before it.
	onsetFallDB = 3
	// roomLoudShare: the percentile of the room's levels a voice must stand out of in a room
	// that talks.
	roomLoudShare = 0.8
	// A frame near the member's level is kept out of the room when nearMinN of the last
	// nearWindow frames were (the member talking just under the level that makes them the
	// member's; the room's own loud moments are fewer).
	nearWindow = 50
	nearMinN   = 20
	// A stream whose first steadyN frames of sound (3 s) hold still within steadyDB (their
	// 20th to 80th percentile) before the room is known starts in the room: chatter, music or
	// noise, not a voice at the microphone, whose syllables and gaps spread its levels wider.
	// Chosen on bench/vad's dev split (first 3 s: babble, pink and brown noise 3.4–5.8 dB;
	// every speech item from its start 11.3 dB or more), not tuned.
	steadyN  = 150
	steadyDB = 8
)

func newNeural(c Config) (*neural, error) {
	m, err := silero.Default()
	if err != nil {
		return nil, fmt.Errorf("vad: neural detector: %w", err)
	}
	n := &neural{net: m.NewStream(), on: float32(c.SpeechProb), hold: float32(c.HoldProb), room: roomPrior,
		sinceMember: weakHoldN, thresholdDB: c.ThresholdDB}
	if c.SampleRate != silero.SampleRate {
		n.rs, err = resample.New(pcm.Format{Rate: c.SampleRate, Channels: 1}, pcm.Speech16k())
		if err != nil {
			return nil, fmt.Errorf("vad: neural detector: %w", err)
		}
		n.rsOut = make([]int16, n.rs.MaxOut(c.SampleRate/50))
	}
	return n, nil
}

// classify judges one frame; m has its energy and floor. inUtterance: the frame belongs to an
// utterance (the owning Endpointer's), so it is the member's time, not the room's.
func (n *neural) classify(frame []int16, bg *background, inUtterance bool, m *Measure) {
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
	if !n.roomKnown() {
		// The room has not been heard yet: the network alone decides (a member's first words
		// are often the stream's first sound).
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
	if m.Class == ClassSilence {
		// onsetOverDB louder than the member's speech must be; before the room is known, over
		// the absolute threshold and the most a member's speech must stand out of a room
		m.Onset = over >= need+onsetOverDB
		if !n.roomKnown() {
			m.Onset = m.EnergyDB >= n.thresholdDB && over >= strongMaxDB
		}
		// a word's first frames grow or hold; a click's or a note's fall away
		m.Onset = m.Onset && m.EnergyDB >= n.prevDB-onsetFallDB
	}
	n.prevDB = m.EnergyDB
	n.sinceMember = min(n.sinceMember+1, weakHoldN)
	if m.Strong {
		n.sinceMember = 0
	}
	n.hear(bg, inUtterance, m.Class == ClassSilence, m.EnergyDB, over, p)
}

// hear lets the room take a frame, after the stream's first sound: one outside the member's
// utterances, or a silent one inside (a pause between the member's phrases), or one of an
// utterance that has gone frozenMaxN frames without a silent one (no member talks that long
// without a pause: the room talks, or changed); never one that maybeMember holds for the
// member's, unless frozenMaxN of them came in a row.
func (n *neural) hear(bg *background, inUtterance, silent bool, db, over float64, p float32) {
	if n.sound == 0 && db <= absentDB {
		return // digital silence before the stream's first sound is no room
	}
	n.sound = 1
	if n.firstN < steadyN && !n.roomKnown() {
		n.steadyRoom(bg, db, p)
	}
	member := n.maybeMember(over, p)
	if (!inUtterance || silent) && !member {
		n.frozen = 0
	} else if n.frozen < frozenMaxN {
		n.frozen++
		return
	}
	bg.add(db)
	n.heard = min(n.heard+1, roomReadyN)
	if over < roomOverDB && n.roomKnown() && (!inUtterance || p < n.hold || n.sinceMember >= weakHoldN || n.room >= talkingRoom) {
		// in a room that does not talk, speech inside the member's utterance within weakHoldN
		// of their own that does not stand out is their quieter syllables, not the room
		// starting to talk (over loud music they made the room talk, and then the member's voice
		// was no longer theirs); a running mean over the first room frames (the prior counts as roomPriorN of them),
		// then over about the last roomWindow
		n.roomN = min(n.roomN+1, roomWindow)
		talk := float32(0)
		if p >= n.hold {
			talk = 1
		}
		n.room += (talk - n.room) / float32(min(n.roomN+roomPriorN, roomWindow))
	}
}

// steadyRoom counts a frame of the stream's start while the room is not known. A stream that
// starts in a room that talks (a microphone left open in chatter) is speech to the network from
// its first frame: an utterance opens on it and keeps the room from hearing its frames, so the
// room is not known when the member starts talking in it, and after frozenMaxN frames it would
// take the member's voice for the room. When the first steadyN frames are steady (the room's
// own sound), the room takes them at once: it is known, and talks as much as they did.
func (n *neural) steadyRoom(bg *background, db float64, p float32) {
	n.first[bgBin(db)]++
	n.firstN++
	if p >= n.hold {
		n.firstTalk++
	}
	if n.firstN < steadyN {
		return
	}
	lo, hi := -1, -1
	var cum int
	for k, c := range n.first {
		cum += int(c)
		if lo < 0 && cum > steadyN/5 {
			lo = k
		}
		if cum > steadyN*4/5 {
			hi = k
			break
		}
	}
	if hi-lo > steadyDB {
		return
	}
	for k, c := range n.first {
		for range c {
			bg.add(float64(k - (bgBins - 1)))
		}
	}
	n.heard, n.frozen = roomReadyN, 0
	n.room, n.roomN = float32(n.firstTalk)/steadyN, roomWindow
}

// maybeMember reports whether a frame may be the member's speech that did not make an utterance
// (and so must not become the room): the network calls it speech, it stands within weakSlackDB
// of the level that makes a frame the member's, and nearMinN of the last nearWindow frames did
// too. A member just under that level (a compressed voice, speech a few dB over chatter) talks
// in such runs; the room's own loud moments are rarer. Without it, every sentence of theirs that
// was not heard raised the room's level towards theirs, so the next was not heard either.
func (n *neural) maybeMember(over float64, p float32) bool {
	n.near <<= 1
	if n.roomKnown() && p >= n.on && over >= n.need()-weakSlackDB {
		n.near |= 1
	}
	return n.near&1 == 1 && bits.OnesCount64(n.near&(1<<nearWindow-1)) >= nearMinN
}

// roomKnown reports whether the room has been heard for roomReadyN frames.
func (n *neural) roomKnown() bool { return n.heard >= roomReadyN }

func (n *neural) reset() {
	n.net.Reset()
	n.prevDB = 0
	n.room, n.roomN, n.heard, n.sound, n.frozen, n.sinceMember, n.near = roomPrior, 0, 0, 0, 0, weakHoldN, 0
	n.first, n.firstN, n.firstTalk = [bgBins]uint8{}, 0, 0
	if n.rs != nil {
		n.rs.Reset()
	}
}

// need is how far over the reference a speech frame must stand to be the member's now:
// strongMinDB in a room the network does not hear as speech, up to strongMaxDB in one it does.
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
	// earlyFloorDB: before the room is known, speech over this level (dBFS) counts as the
	// member's for confirmation (a voice at the microphone; the room behind it is quieter).
	earlyFloorDB = -30
)

// memberSpeech counts, among the buffered frames from..to, those the network calls speech
// that stand out of the room as it is known now (when the frames were classified, at the
// start of a stream, it was not known).
func (e *Endpointer) memberSpeech(from, to int) int {
	on := float32(e.cfg.SpeechProb)
	thr := float32(e.det.net.reference(e.det.bg) + e.det.net.need())
	if !e.det.net.roomKnown() {
		thr = earlyFloorDB
	}
	n := 0
	for i := max(from, 0); i < to; i++ {
		if e.meas.pr[i] >= on && e.meas.lv[i] >= thr {
			n++
		}
	}
	return n
}

// neuralNoise reports whether the utterance so far is too little of the member's speech. While
// the room is not known it is judged by the network alone: at the start of a stream the member's
// first words may be all that has been heard.
func (e *Endpointer) neuralNoise() bool {
	if e.det.net.roomKnown() {
		return e.memberSpeech(0, e.bufN) < minSpeechN
	}
	n := 0
	on := float32(e.cfg.SpeechProb)
	for i := range e.bufN {
		if e.meas.pr[i] >= on {
			n++
		}
	}
	return n < minSpeechN
}

// neuralConfirmed reports whether the last second holds enough of the member's speech.
func (e *Endpointer) neuralConfirmed() bool {
	return e.memberSpeech(e.bufN-confirmWindow, e.bufN) >= confirmNeural
}
