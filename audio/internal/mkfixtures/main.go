// Command mkfixtures regenerates audio/testdata/speech from the shared
// speech fixtures (48 kHz stereo espeak-ng WAVs): each is converted to
// 16 kHz mono with the project's resampler, which is what the VAD and STT
// see and a sixth of the size. Run from the repository root:
//
//	go run ./audio/internal/mkfixtures /path/to/fixtures/speech
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/wav"
)

var files = []string{
	"hey-banter-weather.wav",
	"uh-huh.wav",
	"two-questions.wav",
	"long-story.wav",
	// The rest of the set, for the noisy VAD evaluation (bench/vad).
	"banter-joke.wav",
	"hey-banner-weather.wav",
	"pass-the-banner.wav",
	"mike-hear-me.wav",
	"thats-just-banter.wav",
	"banter-stop.wav",
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkfixtures SRC_DIR")
		os.Exit(2)
	}
	for _, name := range files {
		if err := convert(filepath.Join(os.Args[1], name), filepath.Join("audio/testdata/speech", name)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func convert(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	s, f, err := wav.Decode(nil, b)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	r, err := resample.New(f, pcm.Speech16k())
	if err != nil {
		return err
	}
	// Flush the filter delay with trailing silence so no speech is cut.
	s = append(s, make([]int16, f.Len(r.Delay())*2)...)
	out := make([]int16, r.MaxOut(len(s)))
	n, err := r.Process(out, s)
	if err != nil {
		return err
	}
	// Drop the leading group delay so timings match the original.
	d := pcm.Speech16k().Len(r.Delay())
	return os.WriteFile(dst, wav.Encode(pcm.Speech16k(), out[d:n-d]), 0o644)
}
