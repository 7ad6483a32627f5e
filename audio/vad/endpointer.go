// Package vad finds utterances in a stream of mono 20 ms frames: a
// Detector classifies each frame (by default energy over an adaptive noise
// floor, then periodicity and how the pitch moves: a voice, not music, hum,
// typing or noise; see Algorithm) and an Endpointer turns the classes into
// utterances with pre-roll, end-of-speech silence, minimum and maximum
// length (long speech is cut into numbered chunks; a first chunk that is not
// speech is discarded like an utterance would be), and a "speaking now"
// signal for barge-in and room-aware coalescing, raised only on confirmed
// speech.
//
// There is no wall clock inside: time is the frame count. Every timestamp in
// an Event is the stream position of the Endpointer, i.e. the number of
// frames pushed times 20 ms. The owner maps positions to wall time.
//
// Push does not allocate (AllocsPerRun test) except when an utterance first
// outgrows the audio buffer, which starts at 4 s and doubles up to
// MaxUtterance (so at most three times per Endpointer with the defaults).
package vad

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// EventKind says what happened.
type EventKind int

// Event kinds.
const (
	EventUnknown EventKind = iota
	// EventStart: an utterance began (StartSpeech of speech seen).
	EventStart
	// EventSpeaking: the utterance has SpeakingMin of speech whose level
	// varies like speech (not a steady hum); from now on
	// Speaking is true until it ends (barge-in trigger).
	EventSpeaking
	// EventEnd: a chunk of the utterance is complete, with its Audio. Final
	// is false when MaxUtterance cut it and another chunk follows.
	EventEnd
	// EventDiscard: the utterance ended but was too short or too steady to
	// be speech; no audio.
	EventDiscard
)

// String returns the lower-case name.
func (k EventKind) String() string {
	switch k {
	case EventStart:
		return "start"
	case EventSpeaking:
		return "speaking"
	case EventEnd:
		return "end"
	case EventDiscard:
		return "discard"
	default:
		return "unknown"
	}
}

// Event is one endpointing decision.
type Event struct {
	Kind EventKind
	// Utterance numbers utterances from 1 per Endpointer.
	Utterance uint64
	// Chunk numbers the chunks of a long utterance from 0.
	Chunk int
	// Final marks the last chunk (EventEnd, EventDiscard).
	Final bool
	// At is the stream position when the event was decided (the end of the
	// frame just pushed).
	At time.Duration
	// SpeechStart is the position of the utterance's first speech frame.
	SpeechStart time.Duration
	// SpeechEnd is the end of the last speech frame so far (EventEnd,
	// EventDiscard: of this chunk).
	SpeechEnd time.Duration
	// AudioStart is the position of Audio[0] (pre-roll included).
	AudioStart time.Duration
	// Audio is the chunk's mono PCM (EventEnd), pre-roll and post-roll
	// included. It may be empty for a final chunk that holds no speech.
	// It is owned by the Endpointer and valid until the next Push; copy it
	// (e.g. into a WAV) to keep it.
	Audio []int16
}

// Endpointer is the utterance state machine for one speaker. Not safe for
// concurrent use.
type Endpointer struct {
	cfg Config
	det *Detector
	fl  int // samples per frame

	startN, endN, minN, maxN, cutN, preN, postN, speakN int // config in frames

	pos uint64 // frames pushed

	// pre-roll ring: the last preN+startN frames, always written.
	ring      []int16
	ringNext  int // frame slot written next
	ringCount int

	// current utterance
	active     bool
	utt        uint64
	chunk      int
	buf        []int16 // chunk audio, frame-aligned, capacity maxN frames
	flags      []Class // per buffered frame
	meas       frameMeasures
	bufN       int    // frames in buf
	bufPos     uint64 // stream position (frames) of buf frame 0
	shift      int    // frames to drop from the front on the next Push
	speechRun  int    // consecutive speech frames while idle
	firstPos   uint64 // first speech frame of the utterance
	lastSpeech int    // buf index of the last speech frame in this chunk, -1 if none
	lastPos    uint64 // end position of the last speech frame of the utterance
	silence    int    // consecutive non-speech frames
	onset      int    // of those, the last ones that were Onset frames (up to onsetHoldN)
	endCur     int    // silence frames that end this utterance (endN unless SetEndSilence)
	speechN    int    // speech frames in the utterance
	speaking   bool
	levN       int     // speech frames measured for the spread check
	sum, sumSq float64 // and their energies
	// AlgorithmSpeech's evidence for the utterance
	periodicN int     // periodic frames
	heldN     int     // periodic frames that kept the previous pitch
	smoothN   int     // speech frames (periodic with a speech-like pitch move)
	voiceN    int     // prominent speech frames (AlgorithmSpeech), strong frames (AlgorithmNeural)
	voiceSum  float64 // and their energies: the speaker's voiced level
	strong    uint64  // the last 50 frames: bit set for a strong speech frame

	events [3]Event
}

// initialFrames is the utterance buffer's starting size (4 s); it doubles
// up to MaxUtterance the first time a longer utterance needs it, so a
// speaker who never talks long costs 128 KiB at 16 kHz instead of
// MaxUtterance's worth.
const initialFrames = 200

// New returns an Endpointer for cfg (zero fields take defaults).
func New(cfg Config) (*Endpointer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	det, err := newDetector(cfg)
	if err != nil {
		return nil, err
	}
	fl := cfg.SampleRate / 50
	e := &Endpointer{
		cfg: cfg, det: det, fl: fl,
		startN: max(1, frames(cfg.StartSpeech)), endN: max(1, frames(cfg.EndSilence)),
		minN: frames(cfg.MinUtterance), maxN: frames(cfg.MaxUtterance), cutN: frames(cfg.CutSearch),
		preN: frames(cfg.PreRoll), postN: frames(cfg.PostRoll), speakN: max(1, frames(cfg.SpeakingMin)),
	}
	e.ring = make([]int16, (e.preN+e.startN)*fl)
	e.buf = make([]int16, min(e.maxN, initialFrames)*fl)
	e.flags = make([]Class, e.maxN)
	if cfg.Algorithm == AlgorithmNeural {
		e.meas = newFrameMeasures(e.preN+e.startN, e.maxN)
	}
	return e, nil
}

// Config returns the effective configuration (defaults applied).
func (e *Endpointer) Config() Config { return e.cfg }

// FrameLen returns the samples per frame Push expects (SampleRate/50).
func (e *Endpointer) FrameLen() int { return e.fl }

// Position returns the stream position: frames pushed × 20 ms.
func (e *Endpointer) Position() time.Duration { return dur(e.pos) }

// Active reports whether an utterance is in progress (started, not ended).
func (e *Endpointer) Active() bool { return e.active }

// Speaking reports whether the utterance in progress has at least
// SpeakingMin of speech: the speaker is talking now.
func (e *Endpointer) Speaking() bool { return e.active && e.speaking }

// Speech returns how much speech the utterance in progress holds so far
// (0 between utterances). Snapshot it when the bot starts talking and the
// difference later is how long this speaker has talked over the bot.
func (e *Endpointer) Speech() time.Duration {
	if !e.active {
		return 0
	}
	return dur(uint64(e.speechN))
}

// Idle reports whether nothing is pending: no utterance and no speech run
// that could start one. An owner may stop pushing silence then.
func (e *Endpointer) Idle() bool { return !e.active && e.speechRun == 0 }

func dur(frames uint64) time.Duration { return time.Duration(frames) * pcm.FrameDuration }

// Push processes one frame of FrameLen mono samples and returns the events
// it caused, in order (usually none). The slice and any Audio in it are
// owned by the Endpointer and valid until the next Push.
func (e *Endpointer) Push(frame []int16) ([]Event, error) {
	if len(frame) != e.fl {
		return nil, fmt.Errorf("vad: push: frame of %d samples, want %d", len(frame), e.fl)
	}
	e.compact()
	ev := e.events[:0]
	e.det.inUtterance = e.active
	m := e.det.Classify(frame)
	e.pos++

	// Every frame enters the pre-roll ring.
	if len(e.ring) > 0 {
		e.meas.ring(e.ringNext, m)
		copy(e.ring[e.ringNext*e.fl:], frame)
		e.ringNext = (e.ringNext + 1) % (e.preN + e.startN)
		e.ringCount = min(e.ringCount+1, e.preN+e.startN)
	}

	e.strong <<= 1
	if m.Strong {
		e.strong |= 1
	}
	if !e.active {
		switch {
		case m.Class == ClassSpeech || m.Voice:
			// AlgorithmSpeech: any periodic frame that is not a held or
			// jumping pitch may start; only gliding ones keep it going.
		case m.Class == ClassWeak && e.cfg.Algorithm == AlgorithmSpeech:
			// a held or jumping pitch inside noisy speech: neither
			// breaks nor extends the run
			return ev, nil
		default:
			e.speechRun = 0
			return ev, nil
		}
		e.speechRun++
		if e.speechRun < e.startN {
			return ev, nil
		}
		e.begin()
		ev = append(ev, e.event(EventStart))
	} else {
		if e.far(m) {
			// the room, not this speaker: it does not keep the utterance
			// going (chatter or music after the speaker stopped)
			m.Class, m.Onset = ClassSilence, false
		}
		e.append(frame, m.Class)
		e.meas.buffered(e.bufN-1, m)
	}
	if (m.Smooth && m.Prominent) || (m.Strong && e.det.net != nil) {
		e.voiceN++
		e.voiceSum += m.EnergyDB
	}

	if m.Class == ClassSilence {
		e.silence++
		if m.Onset {
			e.onset = min(e.onset+1, onsetHoldN)
		} else {
			e.onset = 0
		}
	} else {
		e.silence, e.onset = 0, 0
		e.lastSpeech = e.bufN - 1
		e.lastPos = e.pos
		e.speechN++
		e.levN++
		e.sum += m.EnergyDB
		e.sumSq += m.EnergyDB * m.EnergyDB
	}
	if m.Prominent {
		// the checks weigh what stands out of the room: a voice over music
		// or chatter, not the music's own notes in its pauses
		if m.Periodic {
			e.periodicN++
		}
		if m.Held {
			e.heldN++
		}
		if m.Smooth {
			e.smoothN++
		}
	}
	if !e.speaking && e.speechN >= e.speakN && e.confirmed() {
		e.speaking = true
		ev = append(ev, e.event(EventSpeaking))
	}
	switch {
	case e.endingSilence() >= e.endCur:
		ev = append(ev, e.finish())
	case e.bufN >= e.maxN && e.chunk == 0 && e.noise():
		// the same checks as an end: music or hum never reaches STT
		ev = append(ev, e.discard())
	case e.bufN >= e.maxN:
		ev = append(ev, e.cut())
	}
	return ev, nil
}

// Flush ends the utterance in progress, as if EndSilence had passed (the
// speaker left or the stream closed). It returns the final event, if any.
func (e *Endpointer) Flush() []Event {
	e.compact()
	e.speechRun = 0
	if !e.active {
		return e.events[:0]
	}
	e.events[0] = e.finish()
	return e.events[:1]
}

// Reset drops everything, including the noise floor.
func (e *Endpointer) Reset() {
	e.det.Reset()
	e.active, e.speaking = false, false
	e.speechRun, e.ringCount, e.ringNext, e.bufN, e.shift = 0, 0, 0, 0, 0
}

// begin starts an utterance from the ring: pre-roll plus the speech run.
func (e *Endpointer) begin() {
	e.active = true
	e.utt++
	e.chunk = 0
	e.speaking = false
	e.levN, e.sum, e.sumSq = 0, 0, 0
	e.periodicN, e.smoothN, e.heldN = 0, 0, 0
	e.voiceN, e.voiceSum = 0, 0
	n := min(e.ringCount, e.preN+e.speechRun)
	e.bufN = n
	e.bufPos = e.pos - uint64(n)
	slots := e.preN + e.startN
	for i := range n {
		s := (e.ringNext - n + i + 2*slots) % slots
		copy(e.buf[i*e.fl:(i+1)*e.fl], e.ring[s*e.fl:(s+1)*e.fl])
		e.flags[i] = ClassSilence
		e.meas.fromRing(i, s)
	}
	// The run's frames before this one are speech; this one is counted by
	// Push like any other.
	run := e.speechRun
	for i := n - run; i < n; i++ {
		e.flags[i] = ClassSpeech
	}
	e.speechN = run - 1
	e.firstPos = e.pos - uint64(run)
	e.lastSpeech = n - 1
	e.speechRun = 0
	e.silence, e.onset = 0, 0
	e.endCur = e.endN
}

func (e *Endpointer) append(frame []int16, c Class) {
	if (e.bufN+1)*e.fl > len(e.buf) {
		// Grow towards MaxUtterance: at most a few times per Endpointer.
		g := make([]int16, min(e.maxN, 2*len(e.buf)/e.fl)*e.fl)
		copy(g, e.buf[:e.bufN*e.fl])
		e.buf = g
	}
	copy(e.buf[e.bufN*e.fl:], frame)
	e.flags[e.bufN] = c
	e.bufN++
}

func (e *Endpointer) event(k EventKind) Event {
	return Event{
		Kind: k, Utterance: e.utt, Chunk: e.chunk, At: dur(e.pos),
		SpeechStart: dur(e.firstPos), SpeechEnd: dur(e.lastPos), AudioStart: dur(e.bufPos),
	}
}

// finish ends the utterance: EventEnd with the chunk's audio up to the last
// speech frame plus post-roll, or EventDiscard.
func (e *Endpointer) finish() Event {
	ev := e.event(EventEnd)
	ev.Final = true
	e.active, e.speaking = false, false
	if e.chunk == 0 && e.noise() {
		ev.Kind = EventDiscard
		e.shift = e.bufN
		return ev
	}
	if e.lastSpeech >= 0 {
		end := min(e.heardTo(e.lastSpeech)+1+e.postN, e.bufN)
		ev.Audio = e.buf[:end*e.fl]
	}
	e.shift = e.bufN
	return ev
}

// heardTo returns the buffered frame where the speech that ends at frame last stops being
// heard. AlgorithmNeural: the network's hold runs on past the last frame that was the member's
// (a word's end under music or a room's chatter, too quiet to stand out of the room); the audio
// keeps it, as Silero's own segments do (they end where the probability falls under the hold).
// When the utterance ends does not change.
func (e *Endpointer) heardTo(last int) int {
	if e.meas.pr == nil {
		return last
	}
	hold := float32(e.cfg.HoldProb)
	for last+1 < e.bufN && e.meas.pr[last+1] >= hold {
		last++
	}
	return last
}

// discard ends the utterance with EventDiscard (a full first chunk that
// is not speech).
func (e *Endpointer) discard() Event {
	ev := e.event(EventDiscard)
	ev.Final = true
	e.active, e.speaking = false, false
	e.shift = e.bufN
	return ev
}

// noise reports whether the utterance so far is not worth transcribing:
// too short, too steady, or (AlgorithmSpeech) too little of its periodic
// sound moves its pitch like a voice (music holds notes).
func (e *Endpointer) noise() bool {
	if e.lastPos-e.firstPos < uint64(e.minN) {
		return true
	}
	switch e.cfg.Algorithm {
	case AlgorithmNeural:
		return e.neuralNoise()
	case AlgorithmEnergy:
		return e.steady()
	}
	// Levels say little at low SNR (the noise compresses them); a held
	// pitch (hum, notes) is the better sign of a steady source.
	return e.smoothN < minSmooth || e.smoothN*smoothShare < e.periodicN || e.heldN*heldShare >= e.periodicN
}

// confirmed reports whether the utterance has clearly voiced speech now:
// at least confirmStrong strong frames in the last 50 (1 s), confirmNeural
// for AlgorithmNeural; for AlgorithmEnergy, levels that vary like speech.
func (e *Endpointer) confirmed() bool {
	switch e.cfg.Algorithm {
	case AlgorithmNeural:
		return e.neuralConfirmed()
	case AlgorithmEnergy:
		return !e.steady()
	}
	return bits.OnesCount64(e.strong&(1<<50-1)) >= confirmStrong
}

// endingSilence is the silence that ends the utterance: the run of silent frames without the
// last ones that may be the next word's onset (up to onsetHoldN).
func (e *Endpointer) endingSilence() int { return e.silence - e.onset }

// onsetHoldN is how long Onset frames may hold off the end of an utterance (140 ms: the
// network's four 32 ms steps to call a soft onset speech, and a frame). While the silence that
// ends the utterance is reached on Onset frames, the end waits for the network's word on them:
// speech continues the utterance; silence, or onsetHoldN of them, ends it. So a pause is heard
// as long as it is, not as long as the network takes to call the next word.
const onsetHoldN = 7

// AlgorithmSpeech's utterance checks.
const (
	minSmooth     = 5  // speech frames an utterance needs
	smoothShare   = 5  // 1 in smoothShare periodic frames must be speech frames
	heldShare     = 2  // and under 1 in heldShare may keep the previous pitch
	confirmStrong = 12 // strong frames in 1 s that confirm speech (Speaking)
	farDB         = 12 // see far
)

// far reports whether a frame in an utterance is more than farDB under the
// speaker's voiced level so far (once minSmooth frames set it; for
// AlgorithmNeural only when the room at its loud moments comes within
// roomNearDB of the speaker): a quieter voice or instrument in the room,
// which must not hold the turn open. The speaker's own syllables stay
// within it.
func (e *Endpointer) far(m Measure) bool {
	if e.det.net != nil && e.voiceN >= minSmooth &&
		e.det.bg.levelAt(roomLoudShare) < e.voiceSum/float64(e.voiceN)-roomNearDB {
		// AlgorithmNeural: the room is far quieter than the speaker at its loudest (a quiet
		// room), so it cannot be heard in the utterance: a quiet frame is the speaker's own
		// (a word's end)
		return false
	}
	return e.voiceN >= minSmooth && m.Class != ClassSilence && m.EnergyDB < e.voiceSum/float64(e.voiceN)-farDB
}

// steady reports whether the speech frames' levels hardly vary (noise).
func (e *Endpointer) steady() bool {
	if e.cfg.MinSpreadDB <= 0 || e.levN < 2 {
		return false
	}
	n := float64(e.levN)
	mean := e.sum / n
	v := e.sumSq/n - mean*mean
	return math.Sqrt(max(0, v)) < e.cfg.MinSpreadDB
}

// cut closes a full chunk at the last pause within CutSearch, or at the
// end, and keeps the rest as the start of the next chunk.
func (e *Endpointer) cut() Event {
	at := e.bufN
	for i := e.bufN - 1; i >= max(0, e.bufN-e.cutN); i-- {
		if e.flags[i] == ClassSilence {
			at = i + 1
			break
		}
	}
	ev := e.event(EventEnd)
	ev.Audio = e.buf[:at*e.fl]
	e.shift = at
	return ev
}

// compact drops the frames the previous Push handed out, after their Audio
// stopped being valid.
func (e *Endpointer) compact() {
	if e.shift == 0 {
		return
	}
	n := e.shift
	e.shift = 0
	copy(e.buf, e.buf[n*e.fl:e.bufN*e.fl])
	copy(e.flags, e.flags[n:e.bufN])
	e.meas.shift(n, e.bufN)
	e.bufN -= n
	e.bufPos += uint64(n)
	if !e.active {
		e.bufN = 0
		return
	}
	e.chunk++
	e.lastSpeech = -1
	for i := e.bufN - 1; i >= 0; i-- {
		if e.flags[i] != ClassSilence {
			e.lastSpeech = i
			break
		}
	}
}
