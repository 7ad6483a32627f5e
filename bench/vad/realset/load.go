package realset

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/bench/vad/realset/g722"
)

// Recording is one source file decoded to 16 kHz mono, in int16 units as
// float32 divided by 32768 (full scale ±1).
type Recording struct {
	Path    string // relative to the data directory
	Rate    int    // the file's own sample rate
	Samples []float32
}

// load decodes a file of the data directory by its extension: .wav (16-bit
// PCM, mono or stereo, any rate audio/resample takes), .raw (8 kHz s16le
// mono, as codec2-examples ships), .g722 (64 kbit/s G.722, 16 kHz, as
// Asterisk's sound packages ship), .gsm (GSM 06.10, 8 kHz, through sox) or
// .ogg (Ogg Vorbis, through oggdec).
func load(dir, rel string) (Recording, error) {
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return Recording{}, fmt.Errorf("realset: %w", err)
	}
	var s []int16
	var f pcm.Format
	switch ext := strings.ToLower(filepath.Ext(rel)); ext {
	case ".ogg":
		// Ogg Vorbis, decoded to WAV by oggdec (vorbis-tools)
		cmd := exec.Command("oggdec", "-Q", "-o", "-", "-")
		cmd.Stdin = bytes.NewReader(b)
		var out, errb bytes.Buffer
		out.Grow(16 * len(b)) // Vorbis is about 10:1 against 44.1 kHz stereo
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return Recording{}, fmt.Errorf("realset: %s: oggdec (vorbis-tools; make vad-data installs it): %w %s", rel, err, strings.TrimSpace(errb.String()))
		}
		if s, f, err = wav.Decode(nil, out.Bytes()); err != nil {
			return Recording{}, fmt.Errorf("realset: %s: oggdec output: %w", rel, err)
		}
	case ".gsm":
		// GSM 06.10 (8 kHz, as older Asterisk prompt packages ship),
		// decoded to raw s16le by sox
		cmd := exec.Command("sox", "-t", "gsm", "-r", "8000", "-c", "1", "-", "-t", "raw", "-e", "signed-integer", "-b", "16", "-L", "-")
		cmd.Stdin = bytes.NewReader(b)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return Recording{}, fmt.Errorf("realset: %s: sox (make vad-data installs it): %w %s", rel, err, strings.TrimSpace(errb.String()))
		}
		s = make([]int16, out.Len()/2)
		pcm.FromBytes(s, out.Bytes()[:2*len(s)])
		f = pcm.Format{Rate: 8000, Channels: 1}
	case ".wav":
		if s, f, err = wav.Decode(nil, b); err != nil {
			return Recording{}, fmt.Errorf("realset: %s: %w", rel, err)
		}
	case ".raw":
		s = make([]int16, len(b)/2)
		pcm.FromBytes(s, b[:2*len(s)])
		f = pcm.Format{Rate: 8000, Channels: 1}
	case ".g722":
		s = g722.NewDecoder().Decode(make([]int16, 0, 2*len(b)), b)
		f = pcm.Speech16k()
	default:
		return Recording{}, fmt.Errorf("realset: %s: unknown extension %q", rel, ext)
	}
	out, err := to16k(s, f)
	if err != nil {
		return Recording{}, fmt.Errorf("realset: %s: %w", rel, err)
	}
	return Recording{Path: rel, Rate: f.Rate, Samples: out}, nil
}

// to16k resamples interleaved s of format f to 16 kHz mono float32.
func to16k(s []int16, f pcm.Format) ([]float32, error) {
	if f != pcm.Speech16k() {
		rs, err := resample.New(f, pcm.Speech16k())
		if err != nil {
			return nil, err
		}
		// flush the filter's delay line with its length of zeros, then
		// drop the delay so the output lines up with the input
		pad := make([]int16, 0, len(s)+f.Channels*(2*rs.Taps()*f.Rate/pcm.Speech16k().Rate+64))
		pad = append(pad, s...)
		pad = pad[:cap(pad)]
		clear(pad[len(s):])
		out := make([]int16, rs.MaxOut(len(pad)))
		n, err := rs.Process(out, pad)
		if err != nil {
			return nil, err
		}
		d := pcm.Speech16k().Samples(rs.Delay())
		want := len(s) / f.Channels * pcm.Speech16k().Rate / f.Rate
		s = out[min(d, n):min(n, d+want)]
	}
	x := make([]float32, len(s))
	for i, v := range s {
		x[i] = float32(v) / 32768
	}
	return x, nil
}
