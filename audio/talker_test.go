package audio

import (
	"errors"
	"testing"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/prometheus/client_golang/prometheus"
)

// TestTalker feeds TTS-like 24 kHz mono speech in uneven chunks and decodes
// the frames on the listening side, as a Discord member would.
func TestTalker(t *testing.T) {
	speech16 := testaudio.Speech16k(t, "hey-banter-weather.wav")
	tests := []struct {
		name  string
		in    pcm.Format
		chunk int // input values per Write
		app   opus.Application
		enc   pcm.Format // the encoder's input: zero means in, not resampled
	}{
		{"tts 24k mono, odd chunks", pcm.Mono24k(), 1111, opus.ApplicationVoIP, pcm.Format{}},
		{"tts 24k mono, 20 ms chunks", pcm.Mono24k(), 480, opus.ApplicationVoIP, pcm.Format{}},
		{"tts 24k mono, default (audio application)", pcm.Mono24k(), 480, opus.ApplicationUnknown, pcm.Format{}},
		{"tts 24k mono, encoded at 48k stereo", pcm.Mono24k(), 1111, opus.ApplicationUnknown, pcm.Discord()},
		{"48k stereo passthrough", pcm.Discord(), 4000, opus.ApplicationVoIP, pcm.Format{}},
		{"16k mono", pcm.Speech16k(), 160, opus.ApplicationVoIP, pcm.Format{}},
		{"44.1k stereo, resampled to 48k", pcm.Format{Rate: 44100, Channels: 2}, 998, opus.ApplicationUnknown, pcm.Discord()},
		{"22.05k mono, resampled to 48k", pcm.Format{Rate: 22050, Channels: 1}, 999, opus.ApplicationUnknown, pcm.Format{Rate: 48000, Channels: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := speech16
			if tt.in != pcm.Speech16k() {
				src = convert(t, speech16, pcm.Speech16k(), tt.in)
			}
			m := NewMetrics(prometheus.NewRegistry())
			tk, err := NewTalker(tt.in, opus.EncoderConfig{Application: tt.app, Rate: tt.enc.Rate, Channels: tt.enc.Channels}, m)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.enc
			if want == (pcm.Format{}) {
				want = tt.in
			}
			if e := tk.Encoder(); e.Rate() != want.Rate || e.Channels() != want.Channels {
				t.Errorf("encoder at %d Hz, %d channels; want %v", e.Rate(), e.Channels(), want)
			}
			var pkts [][]byte
			emit := func(p []byte) error {
				pkts = append(pkts, append([]byte(nil), p...))
				return nil
			}
			for off := 0; off < len(src); off += tt.chunk {
				if err := tk.Write(src[off:min(off+tt.chunk, len(src))], emit); err != nil {
					t.Fatal(err)
				}
			}
			if err := tk.Flush(emit); err != nil {
				t.Fatal(err)
			}
			if tk.Pending() != 0 {
				t.Errorf("%d values pending after Flush", tk.Pending())
			}
			wantFrames := (pcm.Speech16k().Duration(len(speech16)) + pcm.FrameDuration - 1) / pcm.FrameDuration
			if d := len(pkts) - int(wantFrames); d < -1 || d > 1 {
				t.Errorf("%d frames for %v of audio, want %d", len(pkts), pcm.Speech16k().Duration(len(speech16)), wantFrames)
			}
			if uint64(len(pkts)) != tk.Frames() || counterValue(m.encoded) != float64(len(pkts)) {
				t.Errorf("Frames() %d, counted %v, emitted %d", tk.Frames(), counterValue(m.encoded), len(pkts))
			}
			// Decode as the listener would and compare with the speech.
			dec, _ := opus.NewDecoder()
			frame := make([]int16, opus.FrameLen)
			var got []int16
			for _, p := range pkts {
				if n, err := opus.PacketSamples(p); err != nil || n != opus.FrameSamples {
					t.Fatalf("packet of %d samples: %v", n, err)
				}
				if _, err := dec.Decode(p, frame); err != nil {
					t.Fatal(err)
				}
				got = append(got, frame...)
			}
			mono := convert(t, got, pcm.Discord(), pcm.Speech16k())
			snr := bestSNR(speech16, mono, 400)
			t.Logf("%d frames, SNR %.1f dB", len(pkts), snr)
			if snr < 7 {
				t.Errorf("SNR %.1f dB after talk and listen, want ≥ 7", snr)
			}
			wantApp := tt.app
			if wantApp == opus.ApplicationUnknown {
				wantApp = opus.ApplicationAudio // the Talker's default
			}
			if got := tk.Encoder().Application(); got != wantApp {
				t.Errorf("application %v, want %v", got, wantApp)
			}
		})
	}
}

// TestTalkerWriteBytes: the same audio as a byte stream split at odd
// offsets yields exactly the packets of the sample-wise Write.
func TestTalkerWriteBytes(t *testing.T) {
	src := convert(t, testaudio.Speech16k(t, "uh-huh.wav"), pcm.Speech16k(), pcm.Mono24k())
	collect := func(dst *[][]byte) func([]byte) error {
		return func(p []byte) error { *dst = append(*dst, append([]byte(nil), p...)); return nil }
	}
	var want, got [][]byte
	a, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err := a.Write(src, collect(&want)); err != nil {
		t.Fatal(err)
	}
	b, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	raw := pcm.AppendBytes(nil, src)
	for off, step := 0, 1; off < len(raw); off, step = off+step, step*3%10007+1 {
		if err := b.WriteBytes(raw[off:min(off+step, len(raw))], collect(&got)); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d packets from bytes, %d from samples", len(got), len(want))
	}
	for i := range got {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("packet %d differs", i)
		}
	}
}

func TestTalkerEmitErrorAndReset(t *testing.T) {
	tk, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	stop := errors.New("barge-in")
	n := 0
	err := tk.Write(make([]int16, 24000), func([]byte) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("err %v after %d frames, want barge-in after 3", err, n)
	}
	if tk.Frames() != 2 {
		t.Errorf("Frames() %d after the third emit failed, want 2", tk.Frames())
	}
	tk.Reset()
	if tk.Pending() != 0 || tk.Frames() != 0 {
		t.Errorf("Reset left %d pending, %d frames", tk.Pending(), tk.Frames())
	}
	if err := tk.Write(make([]int16, 3), func([]byte) error { return nil }); err != nil {
		t.Errorf("mono write of 3 values: %v", err)
	}
	st, _ := NewTalker(pcm.Discord(), opus.EncoderConfig{}, nil)
	if err := st.Write(make([]int16, 3), func([]byte) error { return nil }); err == nil {
		t.Error("half a stereo frame accepted")
	}
	if _, err := NewTalker(pcm.Mono24k(), opus.EncoderConfig{Bitrate: 1}, nil); err == nil {
		t.Error("bad encoder config accepted")
	}
}

func TestTalkerDoesNotAllocate(t *testing.T) {
	src := convert(t, testaudio.Speech16k(t, "two-questions.wav"), pcm.Speech16k(), pcm.Mono24k())
	tk, _ := NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, NewMetrics(prometheus.NewRegistry()))
	frames := 0
	emit := func([]byte) error { frames++; return nil }
	off := 0
	const chunk = 1000 // a realtime delta of ~42 ms
	allocs := testing.AllocsPerRun(len(src)/chunk-1, func() {
		_ = tk.Write(src[off:off+chunk], emit)
		off += chunk
	})
	if allocs != 0 {
		t.Errorf("%v allocs per write, want 0", allocs)
	}
	raw := pcm.AppendBytes(nil, src)
	off = 0
	allocs = testing.AllocsPerRun(len(raw)/2001-1, func() {
		_ = tk.WriteBytes(raw[off:off+2001], emit) // odd-sized deltas
		off += 2001
	})
	if allocs != 0 {
		t.Errorf("WriteBytes: %v allocs per write, want 0", allocs)
	}
	if frames == 0 {
		t.Error("no frames encoded")
	}
}
