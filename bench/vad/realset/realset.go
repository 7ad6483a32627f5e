// Package realset builds bench/vad's evaluation set from real recordings,
// deterministically from a seed, at 16 kHz mono, for one of three splits:
// dev (for tuning), test (reported) and fresh (a second held-out split, of
// packages first used on 2026-11-29: other speakers, other music). The
// splits are disjoint by speaker and by music track.
//
// The recordings come from Debian packages that make vad-data installs into
// a data directory (scripts/vaddata.sh; Check says whether it is there):
// Asterisk's voice prompts (professional speakers, 16 kHz G.722, decoded by
// the g722 subpackage), codec2's test recordings (several speakers, mostly
// 8 kHz), older Asterisk prompt packages (8 kHz WAV, and GSM through sox),
// Fish Fillets' voice actors (Ogg Vorbis), game and hold music (Ogg Vorbis
// through oggdec, and G.722), and recordings of an IBM Model M keyboard. sources.go is the catalogue;
// bench/vad/README.md lists sources, licences and the rules below.
//
// A split's clips (Build):
//   - clean: its speech items, 3 s of silence first and 2.5 s after each;
//   - pause: sentences with a pause of 300-800 ms at a real inter-word gap
//     (pausePoint): the speaker's gap lengthened with inserted silence, clean;
//   - per noise type (Types) and SNR (SNRs): the speech clip over the noise,
//     and the noise alone (NoiseSeconds, music at least MusicAloneSeconds
//     over the type's tracks).
//
// Truth labels per 20 ms frame come from each clean item (Label). Speech
// items are scaled to SpeechLevelDB active level; noise to the SNR below it
// by its RMS over the clip.
package realset

// Rate is the sample rate of every clip.
const Rate = 16000

// FrameLen is one 20 ms frame at Rate.
const FrameLen = Rate / 50
