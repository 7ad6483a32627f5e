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
	// zero-crossing rate (a fricative such as "s" or "f"): continues an
	// utterance but never starts one.
	ClassWeak
	// ClassSpeech: clearly above the noise floor.
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
type Detector struct {
	thresholdDB, marginDB, weakDB, priorDB float64
	zcrMin                                 float64   // weak-frame ZCR, scaled to the rate
	energies                               []float64 // ring of recent frame energies
	n, next                                int
}

// Frame measurements the detector reports.
type Measure struct {
	Class    Class
	EnergyDB float64 // frame RMS, dBFS
	FloorDB  float64 // noise floor estimate, dBFS
	ZCR      float64 // zero-crossing rate 0..1
}

// NewDetector returns a frame classifier configured like an Endpointer's
// (zero fields take defaults), for callers that only need per-frame
// speech/silence decisions.
func NewDetector(cfg Config) (*Detector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newDetector(cfg), nil
}

func newDetector(c Config) *Detector {
	return &Detector{
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
	m := Measure{EnergyDB: e, FloorDB: floor, Class: ClassSilence}
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

// Reset forgets the noise history.
func (d *Detector) Reset() { d.n, d.next = 0, 0 }
