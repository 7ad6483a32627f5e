package pcm

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		f        Format
		frameLen int
		valid    bool
	}{
		{Discord(), 1920, true},
		{Speech16k(), 320, true},
		{Mono24k(), 480, true},
		{Format{Rate: 48000, Channels: 3}, 0, false},
		{Format{Rate: 4000, Channels: 1}, 0, false},
	}
	for _, tt := range tests {
		if err := tt.f.Validate(); (err == nil) != tt.valid {
			t.Errorf("%v: Validate %v", tt.f, err)
		}
		if tt.valid && tt.f.FrameLen() != tt.frameLen {
			t.Errorf("%v: FrameLen %d, want %d", tt.f, tt.f.FrameLen(), tt.frameLen)
		}
	}
	if d := Discord().Duration(1920 * 50); d != time.Second {
		t.Errorf("Duration %v", d)
	}
}

func TestMix(t *testing.T) {
	st := []int16{100, 300, -32768, -32768, 32767, 32767, 1, -1}
	mono := make([]int16, 4)
	if n := Downmix(mono, st); n != 4 || !slices.Equal(mono, []int16{200, -32768, 32767, 0}) {
		t.Errorf("Downmix = %d %v", n, mono)
	}
	back := make([]int16, 8)
	if n := Upmix(back, mono); n != 4 || !slices.Equal(back, []int16{200, 200, -32768, -32768, 32767, 32767, 0, 0}) {
		t.Errorf("Upmix = %d %v", n, back)
	}
}

func TestClampAndLevels(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want int16
	}{{0.4, 0}, {0.6, 1}, {-0.6, -1}, {40000, 32767}, {-40000, -32768}, {-32768.4, -32768}} {
		if got := Clamp16(c.in); got != c.want {
			t.Errorf("Clamp16(%v) = %d, want %d", c.in, got, c.want)
		}
	}
	sq := []int16{32767, -32767, 32767, -32767}
	if e := EnergyDB(sq); math.Abs(e) > 0.01 {
		t.Errorf("full-scale square %v dBFS, want 0", e)
	}
	if e := EnergyDB(make([]int16, 10)); e != FloorDB {
		t.Errorf("silence %v dBFS", e)
	}
	if z := ZeroCrossingRate(sq); z != 1 {
		t.Errorf("ZCR of alternating signal %v", z)
	}
	if p := Peak([]int16{3, -32768, 5}); p != 32768 {
		t.Errorf("Peak %d", p)
	}
	if s := SNR(sq, sq); !math.IsInf(s, 1) {
		t.Errorf("SNR of identical %v", s)
	}
}

func TestBytes(t *testing.T) {
	s := []int16{1, -2, 32767, -32768, 258}
	b := AppendBytes(nil, s)
	if !slices.Equal(b[:4], []byte{1, 0, 0xfe, 0xff}) {
		t.Errorf("bytes %v", b)
	}
	got := make([]int16, 5)
	if n := FromBytes(got, b); n != 5 || !slices.Equal(got, s) {
		t.Errorf("FromBytes %v", got)
	}
	// Split the stream at every odd and even offset.
	for split := range len(b) {
		var d ByteDecoder
		out := d.Decode(nil, b[:split])
		out = d.Decode(out, b[split:])
		if !slices.Equal(out, s) || d.Pending() {
			t.Errorf("split at %d: %v pending %v", split, out, d.Pending())
		}
	}
	var d ByteDecoder
	d.Decode(nil, []byte{1})
	d.Reset()
	if out := d.Decode(nil, []byte{2, 0}); !slices.Equal(out, []int16{2}) {
		t.Errorf("after Reset: %v", out)
	}
}
