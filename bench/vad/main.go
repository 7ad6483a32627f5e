// Command vad measures banter's speech detector through the real receive
// pipeline: each clip is encoded to Opus as a Discord client would send it
// (48 kHz stereo, VoIP, 64 kb/s) and played into an audio.Listener with
// banter's default endpointing (800 ms silence, 300 ms minimum, 15 s
// maximum, DirectDecode). Run from the repository root (make vad-data first
// for the real set; README.md beside this file says more):
//
//	go run ./bench/vad [-set real|synthetic] [-split test|dev|fresh] [-data DIR] [-write DIR] [-v]
//
// -set real (the default) is bench/vad/realset, built from real recordings
// of speech, music and typing in the data directory, for one split (test,
// the default; dev, which is for tuning; or fresh, a second held-out split
// of other speakers and other music). Banter's default detector runs
// beside Silero VAD v5 (bench/vad/silero: node and interop/vad/silero.js on
// the same decoded audio). It prints per type and SNR: phantom utterances
// per minute and barge-in false triggers per minute on the noise alone,
// speech missed, the median end-of-speech decision, the pause items split
// into several utterances; then one summary line.
//
// -set synthetic is the earlier set (bench/vad/noisyset: espeak-ng speech
// from audio/testdata/speech and synthetic noises), with the energy
// detector beside the current one, as before.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/bench/vad/noisyset"
	"github.com/banterbot/banter/bench/vad/realset"
)

var names = []string{
	"hey-banter-weather.wav", "banter-joke.wav", "hey-banner-weather.wav", "pass-the-banner.wav",
	"mike-hear-me.wav", "uh-huh.wav", "thats-just-banter.wav", "long-story.wav",
	"banter-stop.wav", "two-questions.wav",
}

var verboseFlag *bool

var levels = []float64{20, 10, 5}

func main() {
	set := flag.String("set", "real", "evaluation set: real (recordings, make vad-data) or synthetic (espeak-ng and synthetic noise)")
	split := flag.String("split", "test", "real set: test (reported), dev (for tuning) or fresh (a second held-out split)")
	data := flag.String("data", realset.DefaultDir(), "real set: the data directory make vad-data fills ($VADDATA)")
	interop := flag.String("interop", "interop", "real set: the interop directory with node_modules (make interop-deps)")
	types := flag.String("types", "", "real set: only these noise types, comma-separated (default all)")
	dir := flag.String("speech", "audio/testdata/speech", "synthetic set: directory of the 16 kHz speech items")
	noiseSec := flag.Int("noise-seconds", 60, "length of each noise-only clip")
	seed := flag.Uint64("seed", 22, "set seed")
	seeds := flag.Int("seeds", 1, "synthetic set: run this many seeds (seed, seed+1, ...) and pool their results")
	verbose := flag.Bool("v", false, "print each item's missed frames per clip")
	write := flag.String("write", "", "also write every clip as a 16 kHz WAV into this directory")
	stress := flag.Bool("stress", false, "real set, dev split only: banter on harder conditions (babble and folk music at 5, 3, 0 dB, items 400 ms apart)")
	starts := flag.Bool("starts", false, "real set, dev split only: banter at the start of streams (streams starting in each noise alone; streams starting 0-2 s before each speech item)")
	labels := flag.Bool("labels", false, "real set: audit the truth labels against the network, per speaker (labelled speech after its last speech frame, and under its hold)")
	pauses := flag.Bool("pauses", false, "real set: only the pause items: the pause banter hears in each, and the sentences each end silence would split")
	flag.Parse()
	verboseFlag = verbose
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	var err error
	switch *set {
	case "real":
		o := realOptions{data: *data, split: *split, interop: *interop, write: *write, seed: *seed, noiseSec: *noiseSec, verbose: *verbose}
		if *types != "" {
			o.types = strings.Split(*types, ",")
		}
		if *seeds != 1 {
			err = fmt.Errorf("vad: -seeds is for -set synthetic")
			break
		}
		if *pauses {
			err = runPauses(os.Stdout, o)
			break
		}
		if *labels {
			err = runLabels(os.Stdout, o)
			break
		}
		if *starts {
			err = runStarts(os.Stdout, o)
			break
		}
		if *stress {
			err = runStress(os.Stdout, o)
			break
		}
		err = runReal(context.Background(), o)
	case "synthetic":
		err = run(*dir, *noiseSec, *seed, *seeds, *write)
	default:
		err = fmt.Errorf("vad: -set %q, want real or synthetic", *set)
	}
	if err != nil {
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
				fmt.Println(j.clip.Noise, j.clip.SNR, syntheticAlgorithms[0], j.res[0].perItem)
				fmt.Println(j.clip.Noise, j.clip.SNR, syntheticAlgorithms[1], j.res[1].perItem)
			}
		}
	}
	printTable(os.Stdout, jobs)
	return nil
}

// syntheticAlgorithms are the detectors the synthetic set compares: the earlier pitch detector
// (the default until issue 30) and the default.
var syntheticAlgorithms = [2]vad.Algorithm{vad.AlgorithmSpeech, vad.AlgorithmNeural}

func measure(j *job) error {
	pkts, err := encode(j.clip.Samples)
	if err != nil {
		return err
	}
	for i, alg := range syntheticAlgorithms {
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
