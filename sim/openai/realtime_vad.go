package openaisim

import (
	"encoding/binary"
	"math"
)

// vadState tracks server VAD over appended audio.
type vadState struct {
	inSpeech   bool
	startMs    int
	silenceMs  int
	itemID     string // id announced in speech_started
	frame      []byte // partial 20 ms frame
	frameStart int    // audio ms at the start of frame
}

const vadFrameBytes = SpeechRate / 50 * 2 // 20 ms of pcm16

// frameRMS is the normalized RMS of a pcm16 frame.
func frameRMS(b []byte) float64 {
	var e float64
	n := len(b) / 2
	for i := 0; i < n; i++ {
		v := float64(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
		e += v * v
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(e / float64(n))
}

// vadEvent is what appending audio caused.
type vadEvent int

const (
	vadNone vadEvent = iota
	vadStarted
	vadStopped
)

// feedVADLocked runs VAD over appended audio (24 kHz) and returns the events in
// order with their audio times.
func (c *rtSession) feedVADLocked(audio []byte, cfg vadConfig) (events []vadEvent, times []int) {
	return c.vad.feed(audio, vadFrameBytes, cfg)
}

// feed runs VAD over appended pcm16 audio in 20 ms frames of frameBytes and returns the
// events in order with their audio times (ms). A frame is speech when its RMS exceeds
// threshold × 0.05 (threshold 0.5 ≈ −32 dBFS). The OpenAI face feeds 24 kHz audio, the
// Gemini face 16 kHz.
func (v *vadState) feed(audio []byte, frameBytes int, cfg vadConfig) (events []vadEvent, times []int) {
	for len(audio) > 0 {
		need := frameBytes - len(v.frame)
		take := min(need, len(audio))
		v.frame = append(v.frame, audio[:take]...)
		audio = audio[take:]
		if len(v.frame) < frameBytes {
			break
		}
		speech := frameRMS(v.frame) > cfg.threshold*0.05
		start := v.frameStart
		v.frameStart += 20
		v.frame = v.frame[:0]
		switch {
		case !v.inSpeech && speech:
			v.inSpeech, v.silenceMs = true, 0
			v.startMs = max(0, start-cfg.prefixMs)
			events, times = append(events, vadStarted), append(times, v.startMs)
		case v.inSpeech && speech:
			v.silenceMs = 0
		case v.inSpeech && !speech:
			v.silenceMs += 20
			if v.silenceMs >= cfg.silenceMs {
				v.inSpeech = false
				events, times = append(events, vadStopped), append(times, v.frameStart-v.silenceMs)
			}
		}
	}
	return events, times
}
