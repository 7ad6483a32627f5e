// Command encoder chooses the bot's Opus encoder settings by measurement:
// for each application, complexity and bitrate it encodes the ten speech
// fixtures the way a reply is sent (16 kHz espeak items resampled to the
// 24 kHz mono TTS format; encoded at 24 kHz mono as audio.Talker does, or,
// the earlier path, resampled and upmixed to 48 kHz stereo first), decodes
// them as a member's client does (48 kHz stereo), and reports the CPU per
// 20 ms frame of the encode and of the earlier path's resample and upmix, with
// the objective quality figures of internal/speechscore against the TTS
// audio at 48 kHz: log-spectral distance (LSD, dB, lower is better) and
// segmental SNR (dB). Run from the repository root:
//
//	go run ./bench/voice/encoder [-passes 3] [-reply]
//
// -reply measures only the reply's settings (audio application,
// complexity 5, 64 kb/s) on both paths. The figures are not a perceptual
// score (no PESQ or ViSQOL here).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/internal/speechscore"
)

var names = []string{
	"hey-banter-weather.wav", "banter-joke.wav", "hey-banner-weather.wav", "pass-the-banner.wav",
	"mike-hear-me.wav", "uh-huh.wav", "thats-just-banter.wav", "long-story.wav",
	"banter-stop.wav", "two-questions.wav",
}

type setting struct {
	app        opus.Application
	complexity int
	bitrate    int
	in         pcm.Format // what the encoder takes: the TTS format, or 48 kHz stereo (earlier path)
}

func (s setting) String() string {
	a := map[opus.Application]string{opus.ApplicationAudio: "audio", opus.ApplicationVoIP: "voip", opus.ApplicationLowDelay: "lowdelay"}[s.app]
	return fmt.Sprintf("%-12s %-8s c%-2d %3d kb/s", s.in, a, s.complexity, s.bitrate/1000)
}

func main() {
	dir := flag.String("speech", "audio/testdata/speech", "directory of the 16 kHz speech items")
	passes := flag.Int("passes", 3, "encode passes per setting (CPU: the fastest counts)")
	reply := flag.Bool("reply", false, "only the reply's settings (audio, complexity 5, 64 kb/s), both paths")
	flag.Parse()
	items, err := load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("input        setting            | encode µs/frame | resample µs/frame | LSD dB | segSNR dB")
	for _, s := range settings(*reply) {
		r, err := measure(s, items, *passes)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s | %15.1f | %17.1f | %6.2f | %9.1f\n", s, r.usPerFrame, r.resampleUs, r.lsd, r.segSNR)
	}
}

// settings lists what to measure: each on the TTS format (the reply path)
// and on 48 kHz stereo (the earlier path).
func settings(reply bool) []setting {
	var out []setting
	add := func(app opus.Application, c, br int) {
		for _, in := range []pcm.Format{pcm.Mono24k(), pcm.Discord()} {
			out = append(out, setting{app, c, br, in})
		}
	}
	if reply {
		add(opus.ApplicationAudio, 5, 64000)
		return out
	}
	for _, app := range []opus.Application{opus.ApplicationAudio, opus.ApplicationVoIP} {
		for _, c := range []int{1, 3, 5, 7, 10} {
			for _, br := range []int{32000, 48000, 64000, 96000} {
				add(app, c, br)
			}
		}
	}
	add(opus.ApplicationLowDelay, 5, 64000)
	add(opus.ApplicationLowDelay, 10, 64000)
	return out
}

// item is one speech fixture as the TTS sends it (24 kHz mono) and at
// 48 kHz stereo (the earlier path's encoder input and the reference the
// decoded audio is scored against).
type item struct {
	tts, s48 []int16
}

// load reads the items (16 kHz → 24 kHz TTS format → 48 kHz stereo).
func load(dir string) ([]item, error) {
	var out []item
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		s, f, err := wav.Decode(nil, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		s24, err := convert(s, f, pcm.Mono24k())
		if err != nil {
			return nil, err
		}
		// whole frames, plus 60 ms of silence so the codec delay flushes
		fl := pcm.Mono24k().FrameLen()
		s24 = append(s24[:len(s24)-len(s24)%fl], make([]int16, 3*fl)...)
		s48, err := convert(s24, pcm.Mono24k(), pcm.Discord())
		if err != nil {
			return nil, err
		}
		out = append(out, item{tts: s24, s48: s48})
	}
	return out, nil
}

func convert(s []int16, from, to pcm.Format) ([]int16, error) {
	r, err := resample.New(from, to)
	if err != nil {
		return nil, err
	}
	out := make([]int16, r.MaxOut(len(s)))
	n, err := r.Process(out, s)
	return out[:n], err
}

type result struct {
	usPerFrame, resampleUs, lsd, segSNR float64
}

func measure(s setting, items []item, passes int) (result, error) {
	var best, bestRS time.Duration
	var frames int
	var lsds, snrs []float64
	for p := range passes {
		var spent, rs time.Duration
		frames = 0
		for _, it := range items {
			in := it.tts
			if s.in == pcm.Discord() {
				d, err := resampleTime(it.tts)
				if err != nil {
					return result{}, err
				}
				rs += d
				in = it.s48
			}
			out, n, d, err := encodeDecode(s, in)
			if err != nil {
				return result{}, err
			}
			spent += d
			frames += n
			if p == 0 {
				l, snr := speechscore.Score(speechscore.Mono(it.s48), speechscore.Mono(out))
				lsds = append(lsds, l)
				snrs = append(snrs, snr)
			}
		}
		if p == 0 || spent < best {
			best = spent
		}
		if p == 0 || rs < bestRS {
			bestRS = rs
		}
	}
	perFrame := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / float64(frames) }
	return result{usPerFrame: perFrame(best), resampleUs: perFrame(bestRS), lsd: mean(lsds), segSNR: mean(snrs)}, nil
}

// resampleTime returns the time the earlier path spent turning tts into
// 48 kHz stereo 20 ms at a time, as audio.Talker did.
func resampleTime(tts []int16) (time.Duration, error) {
	r, err := resample.New(pcm.Mono24k(), pcm.Discord())
	if err != nil {
		return 0, err
	}
	fl := pcm.Mono24k().FrameLen()
	out := make([]int16, r.MaxOut(fl))
	t0 := time.Now()
	for off := 0; off+fl <= len(tts); off += fl {
		if _, err := r.Process(out, tts[off:off+fl]); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// encodeDecode encodes in (s.in format) frame by frame and decodes it at
// 48 kHz stereo; it returns the decoded audio, the frame count and the
// time spent encoding.
func encodeDecode(s setting, in []int16) ([]int16, int, time.Duration, error) {
	enc, err := opus.NewEncoder(opus.EncoderConfig{Application: s.app, Complexity: s.complexity, Bitrate: s.bitrate, Rate: s.in.Rate, Channels: s.in.Channels})
	if err != nil {
		return nil, 0, 0, err
	}
	dec, err := opus.NewDecoder()
	if err != nil {
		return nil, 0, 0, err
	}
	pkt := make([]byte, opus.MaxPacketSize)
	frame := make([]int16, opus.FrameLen)
	fl := enc.FrameLen()
	out := make([]int16, 0, len(in)/fl*opus.FrameLen)
	var spent time.Duration
	frames := 0
	for off := 0; off+fl <= len(in); off += fl {
		t0 := time.Now()
		n, err := enc.Encode(in[off:off+fl], pkt)
		spent += time.Since(t0)
		if err != nil {
			return nil, 0, 0, err
		}
		m, err := dec.Decode(pkt[:n], frame)
		if err != nil {
			return nil, 0, 0, err
		}
		out = append(out, frame[:m*opus.Channels]...)
		frames++
	}
	return out, frames, spent, nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
