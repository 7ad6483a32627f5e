package audio

import (
	"fmt"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
)

// Talker turns a stream of PCM in any supported format (TTS or realtime
// audio, typically 24 kHz mono) into Discord's 20 ms Opus frames: cut into
// frames and encode, resampling first only when the encoder does not take
// the input's format. Input may arrive in chunks of any size; a partial
// frame waits for the next Write or Flush.
//
// Write and Flush do not allocate (AllocsPerRun test). A Talker is not safe
// for concurrent use; one goroutine owns an outgoing stream.
type Talker struct {
	in      pcm.Format
	rs      *resample.Resampler // nil when the encoder takes the input format
	enc     *opus.Encoder
	metrics *Metrics

	conv   []int16 // resampler output for one input chunk
	acc    []int16 // the encoder's format, waiting for a whole frame
	pkt    []byte  // encoded frame
	chunk  int     // input values per resampler pass
	flen   int     // values of one 20 ms frame in the encoder's format
	frames uint64  // frames emitted since New or Reset

	bytesIn pcm.ByteDecoder // WriteBytes: odd byte carried between calls
	samples []int16         // WriteBytes: decoded samples, a leftover partial frame first
}

// NewTalker returns a Talker for PCM in format in. m may be nil.
//
// An unset enc.Application means opus.ApplicationAudio here (not the
// encoder's VoIP default): for synthesized speech it encodes at about a
// third of VoIP's CPU, whose SILK/hybrid speech modes are built for
// microphones, with a better waveform SNR (TestTalker, BenchmarkSessionTick,
// docs/audio.md). Pass opus.ApplicationVoIP to override.
//
// The encoder takes the input as it is when libopus encodes that format
// (8, 12, 16, 24 or 48 kHz, mono or stereo): 24 kHz mono TTS is encoded at
// 24 kHz mono, without a resampler or an upmix, into Opus packets that a
// Discord client decodes at 48 kHz stereo like any other (docs/audio.md).
// Another input rate (e.g. 44.1 kHz) is resampled to 48 kHz. enc.Rate and
// enc.Channels, when set, choose the encoder's format and the input is
// resampled and up- or downmixed to it.
func NewTalker(in pcm.Format, enc opus.EncoderConfig, m *Metrics) (*Talker, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("audio: new talker: %w", err)
	}
	if enc.Application == opus.ApplicationUnknown {
		enc.Application = opus.ApplicationAudio
	}
	out := EncodeFormat(in, enc)
	enc.Rate, enc.Channels = out.Rate, out.Channels
	e, err := opus.NewEncoder(enc)
	if err != nil {
		return nil, fmt.Errorf("audio: new talker: %w", err)
	}
	t := &Talker{in: in, enc: e, metrics: m, pkt: make([]byte, opus.MaxPacketSize), flen: e.FrameLen()}
	t.chunk = in.FrameLen() // 20 ms of input per pass
	if in != out {
		if t.rs, err = resample.New(in, out); err != nil {
			return nil, fmt.Errorf("audio: new talker: %w", err)
		}
		t.conv = make([]int16, t.rs.MaxOut(t.chunk))
	}
	t.acc = make([]int16, 0, len(t.conv)+t.chunk+t.flen)
	t.samples = make([]int16, 0, bytesChunk/2+2)
	return t, nil
}

// EncodeFormat returns the PCM format a Talker for input in encodes with
// encoder settings enc: enc.Rate and enc.Channels where set, else in's rate
// when libopus takes it (48 kHz when not) and in's channels.
func EncodeFormat(in pcm.Format, enc opus.EncoderConfig) pcm.Format {
	out := in
	if !opus.ValidRate(out.Rate) {
		out.Rate = opus.SampleRate
	}
	if enc.Rate != 0 {
		out.Rate = enc.Rate
	}
	if enc.Channels != 0 {
		out.Channels = enc.Channels
	}
	return out
}

// bytesChunk is the most bytes WriteBytes decodes per pass.
const bytesChunk = 4096

// WriteBytes is Write for a little-endian byte stream (an OpenAI TTS "pcm"
// body or a decoded Realtime audio delta) split at arbitrary offsets: an
// odd byte or a partial sample frame waits for the next call.
func (t *Talker) WriteBytes(b []byte, emit func(packet []byte) error) error {
	for len(b) > 0 {
		n := min(len(b), bytesChunk)
		t.samples = t.bytesIn.Decode(t.samples, b[:n])
		b = b[n:]
		whole := len(t.samples) - len(t.samples)%t.in.Channels
		if err := t.Write(t.samples[:whole], emit); err != nil {
			t.samples = t.samples[:0]
			return err
		}
		t.samples = t.samples[:copy(t.samples, t.samples[whole:])]
	}
	return nil
}

// Encoder returns the Opus encoder, e.g. to change the bitrate.
func (t *Talker) Encoder() *opus.Encoder { return t.enc }

// Frames returns the number of frames emit accepted (returned nil for)
// since NewTalker or Reset; times 20 ms it is the audio handed to the
// sender so far, e.g. what was played before a barge-in.
func (t *Talker) Frames() uint64 { return t.frames }

// Pending returns the values (in the encoder's format) waiting for a whole
// frame.
func (t *Talker) Pending() int { return len(t.acc) }

// In returns the input format.
func (t *Talker) In() pcm.Format { return t.in }

// Write converts s (interleaved In format; whole sample frames) and calls
// emit with each complete Opus frame in order. The packet passed to emit is
// reused after emit returns: copy it to keep it. An error from emit stops
// Write and is returned.
func (t *Talker) Write(s []int16, emit func(packet []byte) error) error {
	if len(s)%t.in.Channels != 0 {
		return fmt.Errorf("audio: talker write: %d values is not whole %d-channel frames", len(s), t.in.Channels)
	}
	for len(s) > 0 {
		n := min(len(s), t.chunk)
		if t.rs == nil {
			t.acc = append(t.acc, s[:n]...)
		} else {
			w, err := t.rs.Process(t.conv, s[:n])
			if err != nil {
				return fmt.Errorf("audio: talker write: %w", err)
			}
			t.acc = append(t.acc, t.conv[:w]...)
		}
		s = s[n:]
		if err := t.drain(emit); err != nil {
			return err
		}
	}
	return nil
}

// Flush pads a pending partial frame with silence and emits it. Call it at
// the end of an utterance.
func (t *Talker) Flush(emit func(packet []byte) error) error {
	if len(t.acc) == 0 {
		return nil
	}
	k := len(t.acc)
	t.acc = t.acc[:t.flen]
	clear(t.acc[k:])
	return t.drain(emit)
}

// Reset drops pending audio and restarts the resampler and encoder (a new
// reply, or playback was interrupted).
func (t *Talker) Reset() {
	t.acc = t.acc[:0]
	t.samples = t.samples[:0]
	t.bytesIn.Reset()
	t.frames = 0
	if t.rs != nil {
		t.rs.Reset()
	}
	t.enc.Reset()
}

func (t *Talker) drain(emit func([]byte) error) error {
	off := 0
	defer func() { t.acc = t.acc[:copy(t.acc, t.acc[off:])] }()
	for ; off+t.flen <= len(t.acc); off += t.flen {
		n, err := t.enc.Encode(t.acc[off:off+t.flen], t.pkt)
		t.metrics.encodedFrame(err)
		if err != nil {
			return fmt.Errorf("audio: talker: %w", err)
		}
		if err := emit(t.pkt[:n]); err != nil {
			off += t.flen // dropped: the sender gave up on it
			return err
		}
		t.frames++
	}
	return nil
}
