package vad

import (
	"math"

	"github.com/banterbot/banter/audio/pcm"
)

// Class is the detector's verdict on one frame.
type Class int

// Frame classes.
const (
	ClassUnknown Class = iota
	// ClassSilence: at or near the noise floor.
	ClassSilence
	// ClassWeak: a little under the speech threshold with a high
	// zero-crossing rate (AlgorithmEnergy), another periodic or loud frame
	// near speech (AlgorithmSpeech; a fricative such as "s" or "f"), or a
	// probability between HoldProb and SpeechProb (AlgorithmNeural):
	// continues an utterance but never starts one.
	ClassWeak
	// ClassSpeech: clearly above the noise floor (AlgorithmEnergy),
	// periodic with a gliding pitch (AlgorithmSpeech), or a speech
	// probability of at least SpeechProb (AlgorithmNeural).
	ClassSpeech
)

// String returns "silence", "weak", "speech" or "unknown".
func (c Class) String() string {
	switch c {
	case ClassSilence:
		return "silence"
	case ClassWeak:
		return "weak"
	case ClassSpeech:
		return "speech"
	default:
		return "unknown"
	}
}

// Detector classifies mono frames by energy against an adaptive noise floor,
// with the zero-crossing rate rescuing quiet unvoiced consonants.
//
// The noise floor is the minimum frame energy over the last NoiseWindow:
// speech always has dips between syllables, steady noise does not, so the
// floor settles on the noise level within one window even when the stream
// starts with speech (Discord clients only send while their user talks).
// Until a full window has been seen the floor is at most PriorFloorDB.
//
// With AlgorithmNeural (the default) a neural network judges each frame
// (see classifyNeural); the noise floor and the background level are kept
// as for the other algorithms.
//
// With AlgorithmSpeech the energy test is only the first,
// cheap stage: a frame at least 3 dB over the floor is then measured for
// periodicity (pitchTracker). A speech frame is periodic with a pitch of
// 60-400 Hz that glided from the previous frame's (0.5-12 %): held notes and
// hums keep their pitch, chords and noise jump or have none. A periodic frame
// whose pitch is neither held for 60 ms nor jumping is a Voice frame: it may
// start an utterance but does not keep one going. Other periodic frames and
// loud aperiodic ones (a fricative) are weak, and only within 200 ms of a
// speech frame, so clicks after a sentence do not hold the turn open.
type Detector struct {
	alg                                    Algorithm
	thresholdDB, marginDB, weakDB, priorDB float64
	zcrMin                                 float64   // weak-frame ZCR, scaled to the rate
	energies                               []float64 // ring of recent frame energies
	n, next                                int

	pitch *pitchTracker
	bg    *background
	net   *neural // AlgorithmNeural
	// inUtterance: the owning Endpointer is inside an utterance (AlgorithmNeural hears the
	// room only between the member's utterances).
	inUtterance bool
	lastPeriod  float32 // period of the previous frame if it was periodic, else 0
	sinceSpeech int     // frames since the last speech frame
	held        int     // consecutive periodic frames with the same pitch
}

// Speech-algorithm constants (see Detector).
const (
	gateDB      = 3    // energy over the floor worth a pitch measurement
	periodicMax = 0.35 // aperiodicity of a periodic (voiced) frame
	strongMax   = 0.2  // aperiodicity of a clearly voiced frame
	smoothMin   = 0.005
	smoothMax   = 0.12
	weakHoldN   = 10 // frames after a speech frame in which weak frames count
	heldN       = 2  // frames keeping the previous pitch that make a held note
	// prominentDB: a strong frame stands this far over the background
	// level (see background): a voice out of the room, not the room's
	// chatter at one of its louder moments.
	prominentDB = 6
	backgroundN = 250 // frames (5 s) of background history
)

// Frame measurements the detector reports.
type Measure struct {
	Class    Class
	EnergyDB float64 // frame RMS, dBFS
	// Periodic: a pitch in 60-400 Hz (AlgorithmSpeech only).
	Periodic bool
	// Voice: periodic and not a held or jumping pitch: may start an
	// utterance (AlgorithmSpeech).
	Voice bool
	// Held: periodic with the previous frame's pitch (within 0.5 %).
	Held bool
	// Smooth: periodic with a pitch 0.5-12 % away from the previous
	// frame's, as a voice glides (AlgorithmSpeech).
	Smooth bool
	// Prominent: a periodic frame at least 6 dB over BackgroundDB
	// (AlgorithmSpeech): only these count as evidence for an utterance.
	Prominent bool
	// Strong: a smooth frame that is clearly voiced and stands out of
	// the background (AlgorithmSpeech), or a speech frame that stands out
	// of the background (AlgorithmNeural): what confirms speech.
	Strong bool
	// Onset: a silent frame that stands out of the room 6 dB more than the member's speech
	// must (AlgorithmNeural; before the room is known, one over ThresholdDB and 5 dB over the
	// frames heard so far), at most 3 dB under the frame before it: maybe the start of a
	// word, which the network takes up to four 32 ms steps to call speech. It holds off the
	// end of an utterance (Endpointer: onsetHoldN); it does not continue one.
	Onset bool
	// Prob is the network's speech probability for the latest 32 ms that
	// ended in this frame (AlgorithmNeural), else 0.
	Prob float64
	// PitchHz: the pitch of a periodic frame, else 0 (AlgorithmSpeech).
	PitchHz float64
	// Aperiodicity: YIN's normalized difference at the pitch, 0 (a pure
	// period) to about 1 (noise); 1 when not measured.
	Aperiodicity float64
	FloorDB      float64 // noise floor estimate, dBFS
	// BackgroundDB is the level 80 % of the last 5 s of frames exceeded,
	// dBFS (AlgorithmSpeech, AlgorithmNeural): the room a voice must stand
	// out of.
	BackgroundDB float64
	ZCR          float64 // zero-crossing rate 0..1
}

// NewDetector returns a frame classifier configured like an Endpointer's
// (zero fields take defaults), for callers that only need per-frame
// speech/silence decisions.
func NewDetector(cfg Config) (*Detector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newDetector(cfg)
}

func newDetector(c Config) (*Detector, error) {
	d := &Detector{
		alg:         c.Algorithm,
		thresholdDB: c.ThresholdDB,
		marginDB:    c.MarginDB,
		weakDB:      6,
		priorDB:     c.PriorFloorDB,
		// 0.25 at 16 kHz: a dominant component above ~2 kHz. The same
		// frequency crosses zero proportionally less often per sample at
		// higher rates.
		zcrMin:   0.25 * 16000 / float64(c.SampleRate),
		energies: make([]float64, max(1, int(c.NoiseWindow/pcm.FrameDuration))),
	}
	switch c.Algorithm {
	case AlgorithmSpeech:
		d.pitch = newPitchTracker(c.SampleRate)
		d.bg = newBackground(backgroundN, c.PriorFloorDB)
	case AlgorithmNeural:
		d.bg = newBackground(backgroundN, c.PriorFloorDB)
		net, err := newNeural(c)
		if err != nil {
			return nil, err
		}
		d.net = net
	}
	d.sinceSpeech = weakHoldN + 1
	return d, nil
}

// Classify measures one frame and updates the noise floor.
func (d *Detector) Classify(frame []int16) Measure {
	e := pcm.EnergyDB(frame)
	d.energies[d.next] = e
	d.next = (d.next + 1) % len(d.energies)
	d.n = min(d.n+1, len(d.energies))
	floor := math.Inf(1)
	for _, v := range d.energies[:d.n] {
		floor = min(floor, v)
	}
	if d.n < len(d.energies) {
		floor = min(floor, d.priorDB)
	}
	m := Measure{EnergyDB: e, FloorDB: floor, Class: ClassSilence, Aperiodicity: 1}
	if d.net != nil {
		d.net.classify(frame, d.bg, d.inUtterance, &m)
		return m
	}
	if d.alg == AlgorithmSpeech {
		d.classifySpeech(frame, &m)
		return m
	}
	thr := max(d.thresholdDB, floor+d.marginDB)
	switch {
	case e >= thr:
		m.Class = ClassSpeech
	case e >= thr-d.weakDB:
		m.ZCR = pcm.ZeroCrossingRate(frame)
		if m.ZCR >= d.zcrMin {
			m.Class = ClassWeak
		}
	}
	return m
}

// classifySpeech is AlgorithmSpeech's second stage.
func (d *Detector) classifySpeech(frame []int16, m *Measure) {
	d.sinceSpeech = min(d.sinceSpeech+1, weakHoldN+1)
	d.bg.add(m.EnergyDB)
	m.BackgroundDB = d.bg.level()
	if m.EnergyDB < max(d.thresholdDB, m.FloorDB+gateDB) {
		d.pitch.skip(frame)
		d.lastPeriod, d.held = 0, 0
		return
	}
	aper, period := d.pitch.measure(frame)
	m.Aperiodicity = float64(aper)
	m.Periodic = aper < periodicMax && period > 0
	prev := d.lastPeriod
	d.lastPeriod = 0
	if m.Periodic {
		d.lastPeriod = period
		m.PitchHz = float64(d.pitch.rate) / float64(period)
		r := float32(1)
		if prev > 0 {
			r = (period - prev) / period
			r = max(r, -r)
		}
		if r < smoothMin {
			d.held++
		} else {
			d.held = 0
		}
		m.Held = r < smoothMin
		m.Smooth = r >= smoothMin && r < smoothMax
		m.Prominent = m.EnergyDB >= m.BackgroundDB+prominentDB
		m.Strong = m.Smooth && aper < strongMax && m.Prominent
		// A pitch held for 60 ms is a note or a hum; one that jumps is a
		// melody or a chord (or a pitch error).
		m.Voice = d.held < heldN && (prev == 0 || r < smoothMax)
		if m.Smooth {
			m.Class = ClassSpeech
			d.sinceSpeech = 0
			return
		}
	} else {
		d.held = 0
	}
	if d.sinceSpeech > weakHoldN {
		return
	}
	if m.Periodic || m.EnergyDB >= m.FloorDB+d.marginDB {
		m.Class = ClassWeak
	}
}

// Reset forgets the noise history.
func (d *Detector) Reset() {
	d.n, d.next = 0, 0
	d.lastPeriod, d.sinceSpeech, d.held = 0, weakHoldN+1, 0
	if d.pitch != nil {
		d.pitch.reset()
	}
	if d.bg != nil {
		d.bg.reset()
	}
	if d.net != nil {
		d.net.reset()
	}
}
