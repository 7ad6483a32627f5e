package opus

/*
#cgo pkg-config: opus
#include <opus.h>

int banter_opus_enc_set(OpusEncoder *st, int request, int value);
int banter_opus_enc_get(OpusEncoder *st, int request, opus_int32 *value);
int banter_opus_enc_reset(OpusEncoder *st);
int banter_opus_dec_reset(OpusDecoder *st);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Application is the libopus coding mode.
type Application int

// Applications (OPUS_APPLICATION_*).
const (
	// ApplicationUnknown is the zero value; NewEncoder treats it as ApplicationVoIP.
	ApplicationUnknown Application = iota
	// ApplicationVoIP favours speech intelligibility (OPUS_APPLICATION_VOIP).
	ApplicationVoIP
	// ApplicationAudio favours fidelity to the input (OPUS_APPLICATION_AUDIO).
	ApplicationAudio
	// ApplicationLowDelay disables the speech modes for minimum latency
	// (OPUS_APPLICATION_RESTRICTED_LOWDELAY).
	ApplicationLowDelay
)

// String returns the configuration spelling: "voip", "audio", "lowdelay".
func (a Application) String() string {
	switch a {
	case ApplicationVoIP:
		return "voip"
	case ApplicationAudio:
		return "audio"
	case ApplicationLowDelay:
		return "lowdelay"
	default:
		return "unknown"
	}
}

// ParseApplication parses the spelling String returns.
func ParseApplication(s string) (Application, error) {
	switch s {
	case "voip":
		return ApplicationVoIP, nil
	case "audio":
		return ApplicationAudio, nil
	case "lowdelay":
		return ApplicationLowDelay, nil
	}
	return ApplicationUnknown, fmt.Errorf("opus: unknown application %q (want voip, audio or lowdelay)", s)
}

func (a Application) code() int {
	switch a {
	case ApplicationAudio:
		return 2049
	case ApplicationLowDelay:
		return 2051
	default:
		return 2048
	}
}

// Signal hints the kind of audio to the encoder's mode decision.
type Signal int

// Signals (OPUS_SET_SIGNAL).
const (
	// SignalAuto lets libopus decide (the zero value).
	SignalAuto Signal = iota
	// SignalVoice biases towards the SILK and hybrid speech modes: better
	// speech at low bitrates, but about 3-4× the CPU of CELT at 64 kb/s.
	SignalVoice
	// SignalMusic biases towards CELT.
	SignalMusic
)

// String returns "auto", "voice" or "music".
func (s Signal) String() string {
	switch s {
	case SignalVoice:
		return "voice"
	case SignalMusic:
		return "music"
	default:
		return "auto"
	}
}

func (s Signal) code() int {
	switch s {
	case SignalVoice:
		return 3001
	case SignalMusic:
		return 3002
	default:
		return opusAuto
	}
}

// EncoderConfig configures an Encoder. The zero value is libopus's VoIP
// default at DefaultBitrate: complexity 9, automatic signal type, no FEC.
type EncoderConfig struct {
	// Application is the coding mode; zero means ApplicationVoIP.
	Application Application
	// Bitrate in bits per second, 6000..510000; zero means DefaultBitrate.
	Bitrate int
	// Complexity 1..10 trades CPU for quality; zero means libopus's
	// default, 9. Encoding cost roughly halves from 10 to 5 (see the
	// package benchmarks).
	Complexity int
	// Signal hints voice or music; zero lets libopus decide.
	Signal Signal
	// FEC enables in-band forward error correction (only effective with
	// PacketLossPercent > 0).
	FEC bool
	// PacketLossPercent is the expected loss (0..100) that FEC plans for.
	PacketLossPercent int
}

// DefaultBitrate is the Encoder bitrate when EncoderConfig.Bitrate is zero.
const DefaultBitrate = 64000

// Encoder encodes 48 kHz interleaved stereo int16 PCM to Opus packets. Not
// safe for concurrent use.
type Encoder struct {
	state []byte // libopus OpusEncoder, opaque
	st    *C.OpusEncoder
	app   Application
}

// NewEncoder returns a 48 kHz stereo encoder configured by cfg.
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	if cfg.Application < ApplicationUnknown || cfg.Application > ApplicationLowDelay {
		return nil, fmt.Errorf("opus: new encoder: application %d out of range", int(cfg.Application))
	}
	if cfg.Application == ApplicationUnknown {
		cfg.Application = ApplicationVoIP
	}
	if cfg.Bitrate == 0 {
		cfg.Bitrate = DefaultBitrate
	}
	if cfg.Bitrate < 6000 || cfg.Bitrate > 510000 {
		return nil, fmt.Errorf("opus: new encoder: bitrate %d outside 6000..510000", cfg.Bitrate)
	}
	if cfg.Complexity == 0 {
		cfg.Complexity = 9
	}
	if cfg.Complexity < 0 || cfg.Complexity > 10 {
		return nil, fmt.Errorf("opus: new encoder: complexity %d outside 0..10", cfg.Complexity)
	}
	if cfg.Signal < SignalAuto || cfg.Signal > SignalMusic {
		return nil, fmt.Errorf("opus: new encoder: signal %d out of range", int(cfg.Signal))
	}
	if cfg.PacketLossPercent < 0 || cfg.PacketLossPercent > 100 {
		return nil, fmt.Errorf("opus: new encoder: packet loss %d%% outside 0..100", cfg.PacketLossPercent)
	}
	size := int(C.opus_encoder_get_size(Channels))
	if size <= 0 {
		return nil, fmt.Errorf("opus: new encoder: state size %d", size)
	}
	e := &Encoder{state: make([]byte, size), app: cfg.Application}
	e.st = (*C.OpusEncoder)(unsafe.Pointer(&e.state[0]))
	if ret := C.opus_encoder_init(e.st, SampleRate, Channels, C.int(cfg.Application.code())); ret != 0 {
		return nil, codeErr("new encoder", int(ret))
	}
	fec := 0
	if cfg.FEC {
		fec = 1
	}
	for _, c := range []struct {
		name     string
		req, val int
	}{
		{"bitrate", ctlSetBitrate, cfg.Bitrate},
		{"complexity", ctlSetComplexity, cfg.Complexity},
		{"signal", ctlSetSignal, cfg.Signal.code()},
		{"inband fec", ctlSetInbandFEC, fec},
		{"packet loss", ctlSetPacketLossPerc, cfg.PacketLossPercent},
	} {
		if ret := C.banter_opus_enc_set(e.st, C.int(c.req), C.int(c.val)); ret != 0 {
			return nil, codeErr("new encoder: set "+c.name, int(ret))
		}
	}
	return e, nil
}

// Encode encodes one frame of interleaved stereo PCM into packet and returns
// the packet length. len(pcm)/2 samples per channel must be a valid Opus
// frame duration (2.5, 5, 10, 20, 40 or 60 ms; FrameLen values for Discord's
// 20 ms). packet should have MaxPacketSize bytes; the result is
// packet[:n]. Encode does not allocate on success.
func (e *Encoder) Encode(pcm []int16, packet []byte) (int, error) {
	if len(pcm) < Channels*120 || len(pcm)%Channels != 0 {
		return 0, fmt.Errorf("opus: encode: %w: %d pcm values", ErrBadArgument, len(pcm))
	}
	if len(packet) < 3 {
		return 0, fmt.Errorf("opus: encode: %w: packet buffer %d bytes", ErrBufferTooSmall, len(packet))
	}
	limit := min(len(packet), 4000) // libopus never needs more for one packet
	n := C.opus_encode(e.st, (*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/Channels),
		(*C.uchar)(unsafe.Pointer(&packet[0])), C.int32_t(limit))
	if n < 0 {
		return 0, codeErr("encode", int(n))
	}
	return int(n), nil
}

// SetBitrate changes the target bitrate (bits per second, 6000..510000)
// between frames.
func (e *Encoder) SetBitrate(bps int) error {
	if bps < 6000 || bps > 510000 {
		return fmt.Errorf("opus: set bitrate: %d outside 6000..510000", bps)
	}
	if ret := C.banter_opus_enc_set(e.st, ctlSetBitrate, C.int(bps)); ret != 0 {
		return codeErr("set bitrate", int(ret))
	}
	return nil
}

// Bitrate returns the current target bitrate in bits per second.
func (e *Encoder) Bitrate() int {
	var v C.int32_t
	if C.banter_opus_enc_get(e.st, ctlGetBitrate, &v) != 0 {
		return 0
	}
	return int(v)
}

// Application returns the coding mode the encoder was built with.
func (e *Encoder) Application() Application { return e.app }

// Reset returns the encoder to its initial state (keeping its settings),
// e.g. between two unrelated replies.
func (e *Encoder) Reset() {
	C.banter_opus_enc_reset(e.st)
}
