package opus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
)

// speech48k returns the 48 kHz stereo fixture trimmed to whole 20 ms frames.
func speech48k(t testing.TB) []int16 {
	s, f := testaudio.Load(t, "uh-huh-48k.wav")
	if f != pcm.Discord() {
		t.Fatalf("fixture format %v", f)
	}
	return s[:len(s)/FrameLen*FrameLen]
}

// encodeAll encodes s frame by frame and returns the packets.
func encodeAll(t testing.TB, e *Encoder, s []int16) [][]byte {
	var pkts [][]byte
	buf := make([]byte, MaxPacketSize)
	fl := e.FrameLen()
	for off := 0; off+fl <= len(s); off += fl {
		n, err := e.Encode(s[off:off+fl], buf)
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, append([]byte(nil), buf[:n]...))
	}
	return pkts
}

// bestAlignedSNR returns the SNR of got against want over the delays 0..max
// samples per channel that libopus may introduce, and the best delay.
func bestAlignedSNR(want, got []int16, maxDelay int) (float64, int) {
	best, at := math.Inf(-1), 0
	for d := 0; d <= maxDelay; d++ {
		if snr := pcm.SNR(want[:len(want)-2*d], got[2*d:]); snr > best {
			best, at = snr, d
		}
	}
	return best, at
}

func TestRoundTrip(t *testing.T) {
	src := speech48k(t)
	tests := []struct {
		name   string
		cfg    EncoderConfig
		minSNR float64 // waveform SNR after delay alignment, dB
		level  float64 // largest change of the clip's level, dB
	}{
		{"voip 64k", EncoderConfig{}, 12, 1},
		{"audio 96k", EncoderConfig{Application: ApplicationAudio, Bitrate: 96000}, 15, 1},
		// 24 kb/s runs SILK/hybrid, which drops the top band: libopus 1.3.1
		// loses 1.0-1.1 dB of this clip's level there (1.1.2 lost less).
		{"voip 24k fec", EncoderConfig{Bitrate: 24000, FEC: true, PacketLossPercent: 10}, 5, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewEncoder(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			d, err := NewDecoder()
			if err != nil {
				t.Fatal(err)
			}
			pkts := encodeAll(t, e, src)
			out := make([]int16, 0, len(src))
			frame := make([]int16, FrameLen)
			var bytes int
			for _, p := range pkts {
				if n, err := PacketSamples(p); err != nil || n != FrameSamples {
					t.Fatalf("PacketSamples = %d, %v", n, err)
				}
				n, err := d.Decode(p, frame)
				if err != nil || n != FrameSamples {
					t.Fatalf("decode: %d, %v", n, err)
				}
				out = append(out, frame...)
				bytes += len(p)
			}
			snr, delay := bestAlignedSNR(src, out, 600)
			t.Logf("SNR %.1f dB at delay %d samples, %.0f kb/s", snr, delay, float64(bytes*8)/pcm.Discord().Duration(len(src)).Seconds()/1000)
			if snr < tt.minSNR {
				t.Errorf("SNR %.1f dB, want ≥ %.0f", snr, tt.minSNR)
			}
			// Level preserved over the whole clip.
			if diff := pcm.EnergyDB(out) - pcm.EnergyDB(src); math.Abs(diff) > tt.level {
				t.Errorf("level changed by %.2f dB", diff)
			}
			kbps := float64(bytes*8) / pcm.Discord().Duration(len(src)).Seconds()
			if br := float64(e.Bitrate()); kbps > 1.3*br {
				t.Errorf("%.0f b/s exceeds the %v target", kbps, br)
			}
		})
	}
}

// TestConcealment drops every fifth packet and checks that concealment and
// FEC produce speech-level audio in the gaps instead of silence.
func TestConcealment(t *testing.T) {
	src := speech48k(t)
	e, _ := NewEncoder(EncoderConfig{Bitrate: 32000, FEC: true, PacketLossPercent: 20})
	pkts := encodeAll(t, e, src)
	outs := map[string][]int16{}
	for _, mode := range []string{"plc", "fec"} {
		t.Run(mode, func(t *testing.T) {
			d, _ := NewDecoder()
			frame := make([]int16, FrameLen)
			out := make([]int16, 0, len(src))
			for i, p := range pkts {
				var err error
				if i%5 == 4 {
					if mode == "fec" && i+1 < len(pkts) {
						_, err = d.DecodeFEC(pkts[i+1], frame)
					} else {
						_, err = d.Conceal(frame)
					}
				} else {
					_, err = d.Decode(p, frame)
				}
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				out = append(out, frame...)
			}
			snr, _ := bestAlignedSNR(src, out, 600)
			t.Logf("%s with 20%% loss: SNR %.1f dB", mode, snr)
			if snr < 2 {
				t.Errorf("SNR %.1f dB with concealment, want ≥ 2", snr)
			}
			// A concealed frame inside speech (frames 14..24 hold "uh") is not silent.
			if lvl := pcm.EnergyDB(out[19*FrameLen : 20*FrameLen]); lvl < -50 {
				t.Errorf("concealed frame level %.1f dBFS: silent", lvl)
			}
			outs[mode] = out
		})
	}
	// FEC recovery uses the redundancy in the next packet, so it must not
	// merely repeat what blind concealment produced.
	if slices.Equal(outs["plc"], outs["fec"]) {
		t.Error("DecodeFEC output identical to Conceal: FEC data unused")
	}
}

func TestDecodeErrors(t *testing.T) {
	d, _ := NewDecoder()
	frame := make([]int16, FrameLen)
	tests := []struct {
		name   string
		packet []byte
		pcm    []int16
		want   error
	}{
		{"empty packet", nil, frame, ErrInvalidPacket},
		// TOC code 3 (arbitrary frame count) with a frame count of 0.
		{"zero frame count", []byte{0x03, 0x00}, frame, ErrInvalidPacket},
		// Code 3 with 48 frames of 20 ms = 960 ms > 120 ms.
		{"too long", []byte{0x0b, 0x30}, frame, ErrInvalidPacket},
		{"pcm too small", []byte{0xF8, 0xFF, 0xFE}, frame[:100], ErrBufferTooSmall},
		// A valid 20 ms packet into a 10 ms buffer.
		{"pcm shorter than packet", []byte{0xF8, 0xFF, 0xFE}, frame[:960], ErrBufferTooSmall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.Decode(tt.packet, tt.pcm); !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
		})
	}
	// The decoder still works after errors.
	s := SilenceFrame()
	if n, err := d.Decode(s[:], frame); err != nil || n != FrameSamples {
		t.Errorf("silence frame after errors: %d, %v", n, err)
	}
	if pcm.Peak(frame) != 0 {
		t.Errorf("silence frame decoded to peak %d", pcm.Peak(frame))
	}
	if _, err := PacketSamples(nil); !errors.Is(err, ErrInvalidPacket) {
		t.Errorf("PacketSamples(nil) err %v", err)
	}
}

func TestEncoderConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     EncoderConfig
		wantErr bool
		wantBR  int
	}{
		{"defaults", EncoderConfig{}, false, DefaultBitrate},
		{"bitrate", EncoderConfig{Bitrate: 32000}, false, 32000},
		{"low bitrate", EncoderConfig{Bitrate: 1000}, true, 0},
		{"complexity", EncoderConfig{Complexity: 11}, true, 0},
		{"loss", EncoderConfig{PacketLossPercent: 101}, true, 0},
		{"application", EncoderConfig{Application: 9}, true, 0},
		{"signal", EncoderConfig{Signal: 7}, true, 0},
		{"voice", EncoderConfig{Signal: SignalVoice, Complexity: 10}, false, DefaultBitrate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewEncoder(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && e.Bitrate() != tt.wantBR {
				t.Errorf("bitrate %d, want %d", e.Bitrate(), tt.wantBR)
			}
		})
	}
	e, _ := NewEncoder(EncoderConfig{})
	if err := e.SetBitrate(48000); err != nil || e.Bitrate() != 48000 {
		t.Errorf("SetBitrate: %v, now %d", err, e.Bitrate())
	}
	if err := e.SetBitrate(1); err == nil {
		t.Error("SetBitrate(1) accepted")
	}
	if _, err := e.Encode(make([]int16, 1000), make([]byte, MaxPacketSize)); !errors.Is(err, ErrBadArgument) {
		t.Errorf("odd frame size: %v", err)
	}
	if SignalVoice.String() != "voice" || SignalAuto.String() != "auto" {
		t.Error("Signal.String")
	}
	for _, a := range []Application{ApplicationVoIP, ApplicationAudio, ApplicationLowDelay} {
		if got, err := ParseApplication(a.String()); err != nil || got != a {
			t.Errorf("ParseApplication(%q) = %v, %v", a, got, err)
		}
	}
	if _, err := ParseApplication("music"); err == nil {
		t.Error("ParseApplication(music) accepted")
	}
}

// speechIn returns the 48 kHz stereo fixture converted to rate and
// channels (downmixed, resampled) and the same audio back at 48 kHz stereo,
// the reference a 48 kHz stereo decoder's output is compared with.
func speechIn(t testing.TB, rate, channels int) (in, ref []int16) {
	t.Helper()
	src := speech48k(t)
	f := pcm.Format{Rate: rate, Channels: channels}
	conv := func(s []int16, from, to pcm.Format) []int16 {
		if from == to {
			return s
		}
		r, err := resample.New(from, to)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int16, r.MaxOut(len(s)))
		n, err := r.Process(out, s)
		if err != nil {
			t.Fatal(err)
		}
		return out[:n]
	}
	in = conv(src, pcm.Discord(), f)
	in = in[:len(in)/f.FrameLen()*f.FrameLen()]
	return in, conv(in, f, pcm.Discord())
}

// TestEncoderFormats: an encoder fed PCM at another rate or in mono
// (24 kHz mono: a TTS reply as it arrives) makes ordinary 20 ms Opus
// packets that a Discord client's 48 kHz stereo decoder plays: the TOC says
// 960 samples at 48 kHz and mono or stereo as encoded, a mono stream
// decodes to the same samples on both channels, and the speech survives.
func TestEncoderFormats(t *testing.T) {
	for _, f := range []pcm.Format{{Rate: 24000, Channels: 1}, {Rate: 16000, Channels: 1}, {Rate: 48000, Channels: 1}, {Rate: 24000, Channels: 2}} {
		t.Run(f.String(), func(t *testing.T) {
			in, ref := speechIn(t, f.Rate, f.Channels)
			e, err := NewEncoder(EncoderConfig{Application: ApplicationAudio, Complexity: 5, Rate: f.Rate, Channels: f.Channels})
			if err != nil {
				t.Fatal(err)
			}
			if e.Rate() != f.Rate || e.Channels() != f.Channels || e.FrameLen() != f.FrameLen() {
				t.Fatalf("encoder %d Hz, %d ch, %d values a frame; want %v", e.Rate(), e.Channels(), e.FrameLen(), f)
			}
			d, _ := NewDecoder()
			frame := make([]int16, FrameLen)
			var out []int16
			for _, p := range encodeAll(t, e, in) {
				if n, err := PacketSamples(p); err != nil || n != FrameSamples {
					t.Fatalf("PacketSamples = %d, %v", n, err)
				}
				if stereo := p[0]&0x4 != 0; stereo != (f.Channels == 2) {
					t.Fatalf("TOC stereo flag %v for %d channels", stereo, f.Channels)
				}
				if _, err := d.Decode(p, frame); err != nil {
					t.Fatal(err)
				}
				out = append(out, frame...)
			}
			if f.Channels == 1 {
				for i := 0; i < len(out); i += 2 {
					if out[i] != out[i+1] {
						t.Fatalf("mono stream decoded to different channels at %d", i/2)
					}
				}
			}
			snr, delay := bestAlignedSNR(ref, out, 600)
			t.Logf("SNR %.1f dB at delay %d", snr, delay)
			if snr < 10 {
				t.Errorf("SNR %.1f dB, want ≥ 10", snr)
			}
		})
	}
	for _, cfg := range []EncoderConfig{{Rate: 44100}, {Channels: 3}, {Rate: -1}} {
		if _, err := NewEncoder(cfg); !errors.Is(err, ErrBadArgument) {
			t.Errorf("NewEncoder(%+v): %v, want ErrBadArgument", cfg, err)
		}
	}
	e, _ := NewEncoder(EncoderConfig{Rate: 24000, Channels: 1})
	if _, err := e.Encode(make([]int16, 59), make([]byte, MaxPacketSize)); !errors.Is(err, ErrBadArgument) {
		t.Errorf("1.2 ms at 24 kHz: %v", err)
	}
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	src := speech48k(t)[20*FrameLen : 21*FrameLen]
	e, _ := NewEncoder(EncoderConfig{})
	d, _ := NewDecoder()
	pkt := make([]byte, MaxPacketSize)
	frame := make([]int16, FrameLen)
	n, _ := e.Encode(src, pkt)
	p := pkt[:n]
	in24, _ := speechIn(t, 24000, 1)
	e24, _ := NewEncoder(EncoderConfig{Rate: 24000, Channels: 1})
	for name, f := range map[string]func(){
		"encode":             func() { _, _ = e.Encode(src, pkt) },
		"encode 24 kHz mono": func() { _, _ = e24.Encode(in24[20*480:21*480], pkt) },
		"decode":             func() { _, _ = d.Decode(p, frame) },
		"conceal":            func() { _, _ = d.Conceal(frame) },
		"fec":                func() { _, _ = d.DecodeFEC(p, frame) },
		"samples":            func() { _, _ = PacketSamples(p) },
	} {
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s: %v allocs per frame, want 0", name, a)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the decoders as network packets
// would arrive from any member of a voice channel: each must return an error
// or a sample count that fits the buffer and matches PacketSamples, never
// crash, and keep working afterwards (concealment, then FEC from the same
// packet). It runs the linked libopus at 48 kHz stereo and, as the
// Listener's DirectDecode does, at 16 kHz mono. Seeds: real speech packets
// of every encoder mode, silence, hand-made TOC code 0-3 packets and the
// mutated packets in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	src := speech48k(f)
	for _, cfg := range []EncoderConfig{
		{},
		{Application: ApplicationAudio, Bitrate: 96000},
		{Bitrate: 16000, FEC: true, PacketLossPercent: 20, Signal: SignalVoice},
		{Application: ApplicationLowDelay, Bitrate: 32000},
	} {
		e, err := NewEncoder(cfg)
		if err != nil {
			f.Fatal(err)
		}
		pkts := encodeAll(f, e, src)
		for i := 0; i < len(pkts); i += len(pkts) / 4 {
			f.Add(pkts[i])
		}
	}
	s := SilenceFrame()
	f.Add(s[:])
	f.Add([]byte{0x03, 0x00})                               // code 3, no count byte
	f.Add([]byte{0x0b, 0x30, 0xff})                         // code 3, count 48 of an empty payload
	f.Add([]byte{0xfc, 0x83, 0x01, 0x02})                   // CELT code 0
	f.Add([]byte{0x79, 0xff, 0xff, 0xff})                   // code 1, two equal frames of 1.5 bytes
	f.Add([]byte{0x7a, 0xfc, 0xff, 0x00})                   // code 2, a two-byte length past the end
	f.Add([]byte{0x7b, 0x41, 0xff, 0xff, 0xff, 0xff, 0x01}) // code 3 with chained padding
	decoders := []*Decoder{}
	for _, ft := range []struct{ rate, ch int }{{48000, 2}, {16000, 1}} {
		d, err := NewDecoderFormat(ft.rate, ft.ch)
		if err != nil {
			f.Fatal(err)
		}
		decoders = append(decoders, d)
	}
	out := make([]int16, MaxFrameSamples*Channels)
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, d := range decoders {
			n, err := d.Decode(p, out)
			if err == nil {
				if n <= 0 || n*48000/d.Rate() > MaxFrameSamples {
					t.Fatalf("%d Hz: decoded %d samples", d.Rate(), n)
				}
				if ps, err := PacketSamples(p); err != nil || ps*d.Rate()/48000 != n {
					t.Fatalf("%d Hz: PacketSamples %d, %v; Decode %d", d.Rate(), ps, err, n)
				}
			}
			frame := out[:d.Rate()/50*d.Channels()]
			if _, err := d.Conceal(frame); err != nil {
				t.Fatalf("%d Hz: conceal after packet: %v", d.Rate(), err)
			}
			if _, err := d.DecodeFEC(p, frame); err != nil && !errors.Is(err, ErrInvalidPacket) {
				t.Fatalf("%d Hz: fec: %v", d.Rate(), err)
			}
		}
	})
}

// TestDecoderFormats decodes the same stream at every output format libopus
// supports: each must keep the speech level (no aliasing or loss of the
// band the format can carry) and return rate/50 samples per 20 ms packet.
func TestDecoderFormats(t *testing.T) {
	src := speech48k(t)
	e, _ := NewEncoder(EncoderConfig{})
	pkts := encodeAll(t, e, src)
	ref := pcm.EnergyDB(src)
	for _, f := range []struct{ rate, ch int }{{48000, 2}, {48000, 1}, {24000, 1}, {16000, 1}, {16000, 2}, {8000, 1}} {
		t.Run(fmt.Sprintf("%d-%d", f.rate, f.ch), func(t *testing.T) {
			d, err := NewDecoderFormat(f.rate, f.ch)
			if err != nil {
				t.Fatal(err)
			}
			if d.Rate() != f.rate || d.Channels() != f.ch {
				t.Fatalf("format %d/%d", d.Rate(), d.Channels())
			}
			frame := make([]int16, f.rate/50*f.ch)
			var out []int16
			for _, p := range pkts {
				n, err := d.Decode(p, frame)
				if err != nil || n != f.rate/50 {
					t.Fatalf("decode: %d, %v", n, err)
				}
				out = append(out, frame...)
			}
			if _, err := d.Conceal(frame); err != nil {
				t.Errorf("conceal: %v", err)
			}
			if diff := pcm.EnergyDB(out) - ref; math.Abs(diff) > 1.5 {
				t.Errorf("level %+.1f dB against the 48 kHz source", diff)
			}
			if a := testing.AllocsPerRun(50, func() { _, _ = d.Decode(pkts[20], frame) }); a != 0 {
				t.Errorf("%v allocs", a)
			}
		})
	}
	for _, f := range []struct{ rate, ch int }{{44100, 1}, {16000, 3}} {
		if _, err := NewDecoderFormat(f.rate, f.ch); !errors.Is(err, ErrBadArgument) {
			t.Errorf("%d/%d: %v", f.rate, f.ch, err)
		}
	}
}

// TestLinkedLibopus: the decoder of untrusted audio is a maintained libopus
// (1.3 or later, with the RFC 8251 fixes), not gopus's bundled 1.1.2. A
// second libopus compiled into the binary (as gopus did) would shadow the
// system one and show here.
func TestLinkedLibopus(t *testing.T) {
	v := Version()
	var major, minor int
	if _, err := fmt.Sscanf(v, "libopus %d.%d", &major, &minor); err != nil {
		t.Fatalf("Version() = %q: %v", v, err)
	}
	if major < 1 || major == 1 && minor < 3 {
		t.Errorf("linked %s; want libopus 1.3 or later", v)
	}
	t.Logf("linked %s", v)
}
