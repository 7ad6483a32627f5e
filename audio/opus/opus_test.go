package opus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
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
	for off := 0; off+FrameLen <= len(s); off += FrameLen {
		n, err := e.Encode(s[off:off+FrameLen], buf)
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
	}{
		{"voip 64k", EncoderConfig{}, 12},
		{"audio 96k", EncoderConfig{Application: ApplicationAudio, Bitrate: 96000}, 15},
		{"voip 24k fec", EncoderConfig{Bitrate: 24000, FEC: true, PacketLossPercent: 10}, 5},
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
			// Level preserved within 1 dB over the whole clip.
			if diff := pcm.EnergyDB(out) - pcm.EnergyDB(src); math.Abs(diff) > 1 {
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

func TestHotPathsDoNotAllocate(t *testing.T) {
	src := speech48k(t)[20*FrameLen : 21*FrameLen]
	e, _ := NewEncoder(EncoderConfig{})
	d, _ := NewDecoder()
	pkt := make([]byte, MaxPacketSize)
	frame := make([]int16, FrameLen)
	n, _ := e.Encode(src, pkt)
	p := pkt[:n]
	for name, f := range map[string]func(){
		"encode":  func() { _, _ = e.Encode(src, pkt) },
		"decode":  func() { _, _ = d.Decode(p, frame) },
		"conceal": func() { _, _ = d.Conceal(frame) },
		"fec":     func() { _, _ = d.DecodeFEC(p, frame) },
		"samples": func() { _, _ = PacketSamples(p) },
	} {
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s: %v allocs per frame, want 0", name, a)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the decoder as network packets would
// arrive: it must return an error or a sample count that fits the buffer
// and matches PacketSamples, never crash, and keep decoding afterwards.
func FuzzDecode(f *testing.F) {
	e, _ := NewEncoder(EncoderConfig{})
	pkt := make([]byte, MaxPacketSize)
	n, _ := e.Encode(make([]int16, FrameLen), pkt)
	f.Add(pkt[:n])
	s := SilenceFrame()
	f.Add(s[:])
	f.Add([]byte{0x03, 0x00})
	f.Add([]byte{0x0b, 0x30, 0xff})
	f.Add([]byte{0xfc, 0x83, 0x01, 0x02})
	d, _ := NewDecoder()
	out := make([]int16, MaxFrameSamples*Channels)
	f.Fuzz(func(t *testing.T, p []byte) {
		n, err := d.Decode(p, out)
		if err != nil {
			if _, err := d.Conceal(out[:FrameLen]); err != nil {
				t.Fatalf("conceal after bad packet: %v", err)
			}
			return
		}
		if n <= 0 || n > MaxFrameSamples {
			t.Fatalf("decoded %d samples", n)
		}
		if ps, err := PacketSamples(p); err != nil || ps != n {
			t.Fatalf("PacketSamples %d, %v; Decode %d", ps, err, n)
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
