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
// default at DefaultBitrate for 48 kHz stereo input: complexity 9,
// automatic signal type, no FEC.
type EncoderConfig struct {
	// Rate is the input sample rate: 8000, 12000, 16000, 24000 or 48000 Hz;
	// zero means SampleRate. The packets are ordinary Opus whatever the
	// input rate: a decoder plays them at its own rate (a Discord client at
	// 48 kHz), and a rate below 48 kHz only caps the coded audio band at
	// the rate's Nyquist frequency (24 kHz input: 12 kHz, superwideband).
	// Encoding 24 kHz TTS audio at 24 kHz saves resampling it to 48 kHz.
	Rate int
	// Channels is the input channel count, 1 or 2; zero means Channels
	// (stereo). A mono stream decodes to the same signal on both channels
	// of a stereo decoder, and costs less to encode than an upmixed one.
	Channels int
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

// Encoder encodes interleaved int16 PCM (48 kHz stereo unless configured
// otherwise) to Opus packets. Not safe for concurrent use.
type Encoder struct {
	state    []byte // libopus OpusEncoder, opaque
	st       *C.OpusEncoder
	app      Application
	rate     int
	channels int
}

// NewEncoder returns an encoder configured by cfg (48 kHz stereo input
// unless cfg.Rate and cfg.Channels say otherwise).
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	if err := cfg.defaults(); err != nil {
		return nil, fmt.Errorf("opus: new encoder: %w", err)
	}
	size := int(C.opus_encoder_get_size(C.int(cfg.Channels)))
	if size <= 0 {
		return nil, fmt.Errorf("opus: new encoder: state size %d", size)
	}
	e := &Encoder{state: make([]byte, size), app: cfg.Application, rate: cfg.Rate, channels: cfg.Channels}
	e.st = (*C.OpusEncoder)(unsafe.Pointer(&e.state[0]))
	if ret := C.opus_encoder_init(e.st, C.int32_t(cfg.Rate), C.int(cfg.Channels), C.int(cfg.Application.code())); ret != 0 {
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

// defaults fills the zero fields of c and checks the result.
func (c *EncoderConfig) defaults() error {
	if c.Rate == 0 {
		c.Rate = SampleRate
	}
	if c.Channels == 0 {
		c.Channels = Channels
	}
	if !ValidRate(c.Rate) {
		return fmt.Errorf("%w: rate %d (want 8000, 12000, 16000, 24000 or 48000)", ErrBadArgument, c.Rate)
	}
	if c.Channels != 1 && c.Channels != 2 {
		return fmt.Errorf("%w: %d channels", ErrBadArgument, c.Channels)
	}
	if c.Application < ApplicationUnknown || c.Application > ApplicationLowDelay {
		return fmt.Errorf("application %d out of range", int(c.Application))
	}
	if c.Application == ApplicationUnknown {
		c.Application = ApplicationVoIP
	}
	if c.Bitrate == 0 {
		c.Bitrate = DefaultBitrate
	}
	if c.Bitrate < 6000 || c.Bitrate > 510000 {
		return fmt.Errorf("bitrate %d outside 6000..510000", c.Bitrate)
	}
	if c.Complexity == 0 {
		c.Complexity = 9
	}
	if c.Complexity < 0 || c.Complexity > 10 {
		return fmt.Errorf("complexity %d outside 0..10", c.Complexity)
	}
	if c.Signal < SignalAuto || c.Signal > SignalMusic {
		return fmt.Errorf("signal %d out of range", int(c.Signal))
	}
	if c.PacketLossPercent < 0 || c.PacketLossPercent > 100 {
		return fmt.Errorf("packet loss %d%% outside 0..100", c.PacketLossPercent)
	}
	return nil
}

// Encode encodes one frame of interleaved PCM in the encoder's format into
// packet and returns the packet length. len(pcm)/Channels() samples per
// channel must be a valid Opus frame duration (2.5, 5, 10, 20, 40 or 60 ms;
// FrameLen() values for Discord's 20 ms, FrameLen at 48 kHz stereo). packet
// should have MaxPacketSize bytes; the result is packet[:n]. Encode does not
// allocate on success.
func (e *Encoder) Encode(pcm []int16, packet []byte) (int, error) {
	if len(pcm) < e.rate/400*e.channels || len(pcm)%e.channels != 0 {
		return 0, fmt.Errorf("opus: encode: %w: %d pcm values", ErrBadArgument, len(pcm))
	}
	if len(packet) < 3 {
		return 0, fmt.Errorf("opus: encode: %w: packet buffer %d bytes", ErrBufferTooSmall, len(packet))
	}
	limit := min(len(packet), 4000) // libopus never needs more for one packet
	n := C.opus_encode(e.st, (*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/e.channels),
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

// Rate returns the input sample rate.
func (e *Encoder) Rate() int { return e.rate }

// Channels returns the input channel count.
func (e *Encoder) Channels() int { return e.channels }

// FrameLen returns the int16 values of one 20 ms frame of input (FrameLen
// for 48 kHz stereo, 480 for 24 kHz mono).
func (e *Encoder) FrameLen() int { return e.rate / 50 * e.channels }

// Application returns the coding mode the encoder was built with.
func (e *Encoder) Application() Application { return e.app }

// Reset returns the encoder to its initial state (keeping its settings),
// e.g. between two unrelated replies.
func (e *Encoder) Reset() {
	C.banter_opus_enc_reset(e.st)
}
