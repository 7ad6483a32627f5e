// Command vad measures banter's speech detector on the noisy evaluation
// set (bench/vad/noisyset, built in memory from audio/testdata/speech with
// a fixed seed) through the real receive pipeline: each clip is encoded
// to Opus as a Discord client would send it (48 kHz stereo, VoIP, 64 kb/s)
// and played into an audio.Listener with banter's default endpointing
// (700 ms silence, 300 ms minimum, 15 s maximum, DirectDecode), once with
// the earlier energy detector and once with the current one. Run from the
// repository root:
//
//	go run ./bench/vad [-noise-seconds 60] [-write DIR]
//
// It prints, per noise and SNR: phantom utterances per minute on the noise
// alone, speech missed, the median end-of-speech decision after the speech
// stops, and barge-in false triggers per minute on the noise alone; then
// one summary line for the current detector.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/bench/vad/noisyset"
)

var names = []string{
	"hey-banter-weather.wav", "banter-joke.wav", "hey-banner-weather.wav", "pass-the-banner.wav",
	"mike-hear-me.wav", "uh-huh.wav", "thats-just-banter.wav", "long-story.wav",
	"banter-stop.wav", "two-questions.wav",
}

var verboseFlag *bool

var levels = []float64{20, 10, 5}

func main() {
	dir := flag.String("speech", "audio/testdata/speech", "directory of the 16 kHz speech items")
	noiseSec := flag.Int("noise-seconds", 60, "length of each noise-only clip")
	seed := flag.Uint64("seed", 22, "noise seed")
	seeds := flag.Int("seeds", 1, "run this many seeds (seed, seed+1, ...) and pool their results")
	verbose := flag.Bool("v", false, "print each item's missed frames per clip")
	write := flag.String("write", "", "also write every clip as a 16 kHz WAV into this directory")
	flag.Parse()
	verboseFlag = verbose
	if err := run(*dir, *noiseSec, *seed, *seeds, *write); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// job is one clip to measure with both detectors.
type job struct {
	clip noisyset.Clip
	res  [2]result // [energy, speech]
	err  error
}

func run(dir string, noiseSec int, seed uint64, seeds int, write string) error {
	items, err := noisyset.LoadSpeech(dir, names)
	if err != nil {
		return err
	}
	if seeds < 1 {
		return fmt.Errorf("vad: -seeds %d, want at least 1", seeds)
	}
	if write != "" && seeds > 1 {
		return fmt.Errorf("vad: -write takes one seed, not -seeds %d", seeds)
	}
	var jobs []*job
	add := func(c noisyset.Clip, err error) error {
		if err != nil {
			return err
		}
		jobs = append(jobs, &job{clip: c})
		return nil
	}
	for sd := seed; sd < seed+uint64(seeds); sd++ {
		if err := add(noisyset.SpeechClip("clean", 0, names, items, sd)); err != nil {
			return err
		}
		for _, k := range noisyset.Kinds {
			for _, snr := range levels {
				if err := add(noisyset.SpeechClip(k, snr, names, items, sd)); err != nil {
					return err
				}
				if err := add(noisyset.NoiseClip(k, snr, noiseSec, items, sd)); err != nil {
					return err
				}
			}
		}
	}
	if write != "" {
		if err := writeClips(write, jobs); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	next := make(chan *job)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				j.err = measure(j)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return j.err
		}
	}
	if *verboseFlag {
		for _, j := range jobs {
			if len(j.clip.Items) > 0 {
				fmt.Println(j.clip.Noise, j.clip.SNR, "energy", j.res[0].perItem)
				fmt.Println(j.clip.Noise, j.clip.SNR, "speech", j.res[1].perItem)
			}
		}
	}
	printTable(os.Stdout, jobs)
	return nil
}

func measure(j *job) error {
	pkts, err := encode(j.clip.Samples)
	if err != nil {
		return err
	}
	for i, alg := range []vad.Algorithm{vad.AlgorithmEnergy, vad.AlgorithmSpeech} {
		r, err := listen(pkts, alg)
		if err != nil {
			return err
		}
		j.res[i] = score(j.clip, r)
	}
	return nil
}

func writeClips(dir string, jobs []*job) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, j := range jobs {
		kind := "speech"
		if len(j.clip.Items) == 0 {
			kind = "only"
		}
		name := fmt.Sprintf("%s-%gdB-%s.wav", j.clip.Noise, j.clip.SNR, kind)
		if err := os.WriteFile(filepath.Join(dir, name), wav.Encode(pcm.Speech16k(), j.clip.Samples), 0o644); err != nil {
			return fmt.Errorf("vad: write %s: %w", name, err)
		}
	}
	return nil
}
