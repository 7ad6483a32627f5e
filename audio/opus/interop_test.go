package opus

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
)

// opusscript runs testdata/opusscript.js with the unmodified opusscript
// package from interop/node_modules (installed by make test). It skips when
// node or the package is missing.
func opusscript(t *testing.T, mode string, in []byte) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	modules := filepath.Join(testaudio.Dir(), "..", "..", "interop", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "opusscript")); err != nil {
		t.Skip("interop/node_modules/opusscript missing: run make interop-deps")
	}
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(inPath, in, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, filepath.Join("testdata", "opusscript.js"), mode, inPath, outPath)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opusscript %s: %v\n%s", mode, err, out)
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInteropOpusscript checks the codec against a third-party libopus
// build: what our encoder sends, a discord.js member decodes to the same
// speech; what such a member sends, our decoder decodes.
func TestInteropOpusscript(t *testing.T) {
	src := speech48k(t)
	in24, ref24 := speechIn(t, 24000, 1)
	for _, tc := range []struct {
		name    string
		cfg     EncoderConfig
		in, ref []int16 // what is encoded; what the 48 kHz stereo decode is compared with
	}{
		{"we encode, opusscript decodes", EncoderConfig{}, src, src},
		// A TTS reply as the bot sends it: encoded from 24 kHz mono, played
		// by a member's 48 kHz stereo decoder.
		{"we encode 24 kHz mono, opusscript decodes", EncoderConfig{Application: ApplicationAudio, Complexity: 5, Rate: 24000, Channels: 1}, in24, ref24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEncoder(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var framed []byte
			for _, p := range encodeAll(t, e, tc.in) {
				framed = binary.LittleEndian.AppendUint16(framed, uint16(len(p)))
				framed = append(framed, p...)
			}
			raw := opusscript(t, "decode", framed)
			got := make([]int16, len(raw)/2)
			pcm.FromBytes(got, raw)
			if want := len(tc.in) / e.FrameLen() * FrameLen; len(got) != want {
				t.Fatalf("opusscript decoded %d values, want %d", len(got), want)
			}
			snr, delay := bestAlignedSNR(tc.ref, got, 600)
			t.Logf("SNR %.1f dB at delay %d", snr, delay)
			if snr < 10 {
				t.Errorf("SNR %.1f dB, want ≥ 10", snr)
			}
		})
	}
	t.Run("opusscript encodes, we decode", func(t *testing.T) {
		framed := opusscript(t, "encode", pcm.AppendBytes(nil, src))
		d, _ := NewDecoder()
		frame := make([]int16, FrameLen)
		var got []int16
		for off := 0; off+2 <= len(framed); {
			n := int(binary.LittleEndian.Uint16(framed[off:]))
			off += 2
			if _, err := d.Decode(framed[off:off+n], frame); err != nil {
				t.Fatalf("packet at %d: %v", off, err)
			}
			got = append(got, frame...)
			off += n
		}
		if len(got) != len(src) {
			t.Fatalf("decoded %d values, want %d", len(got), len(src))
		}
		snr, delay := bestAlignedSNR(src, got, 600)
		t.Logf("SNR %.1f dB at delay %d", snr, delay)
		if snr < 10 {
			t.Errorf("SNR %.1f dB, want ≥ 10", snr)
		}
	})
}
