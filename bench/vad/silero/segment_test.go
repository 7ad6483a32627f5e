package silero

import (
	"slices"
	"testing"
	"time"
)

// probs builds a probability sequence from runs of (count, probability).
func probs(runs ...any) []float32 {
	var out []float32
	for i := 0; i < len(runs); i += 2 {
		for range runs[i].(int) {
			out = append(out, float32(runs[i+1].(float64)))
		}
	}
	return out
}

func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }

func TestSegments(t *testing.T) {
	short := params700()
	short.MaxSpeech = 2 * time.Second // 1908 ms after the reference's window and padding
	for _, tc := range []struct {
		name  string
		p     Params
		probs []float32
		want  []Segment
	}{
		{"silence", params700(), probs(60, 0.1), nil},
		{"one utterance", params700(), probs(5, 0.1, 20, 0.9, 40, 0.1), []Segment{
			// speech 160-800 ms, padded 30 ms; the end is known when 700 ms
			// of silence have passed: chunk 47 (1504 ms), at its end
			{Start: ms(130), End: ms(830), Decided: ms(1536), Kept: true, Barge: ms(576)},
		}},
		{"a blip under min speech is dropped", params700(), probs(5, 0.1, 5, 0.9, 40, 0.1), []Segment{
			{Start: ms(160), End: ms(320), Decided: ms(1056), Kept: false, Barge: -1},
		}},
		{"a 640 ms pause does not split", params700(), probs(5, 0.1, 20, 0.9, 20, 0.1, 20, 0.9, 40, 0.1), []Segment{
			{Start: ms(130), End: ms(2110), Decided: ms(2816), Kept: true, Barge: ms(576)},
		}},
		{"an 800 ms pause splits", params700(), probs(5, 0.1, 20, 0.9, 25, 0.1, 20, 0.9, 40, 0.1), []Segment{
			{Start: ms(130), End: ms(830), Decided: ms(1536), Kept: true, Barge: ms(576)},
			{Start: ms(1570), End: ms(2270), Decided: ms(2976), Kept: true, Barge: ms(2016)},
		}},
		{"between the thresholds speech goes on", params700(), probs(5, 0.1, 10, 0.9, 30, 0.4, 10, 0.9, 40, 0.1), []Segment{
			{Start: ms(130), End: ms(1790), Decided: ms(2496), Kept: true, Barge: ms(576)},
		}},
		{"speech to the end of the clip", params700(), probs(5, 0.1, 20, 0.9), []Segment{
			{Start: ms(130), End: ms(800), Decided: ms(800), Kept: true, Barge: ms(576)},
		}},
		{"max speech cuts at the last silence, then hard", short, probs(30, 0.9, 5, 0.1, 65, 0.9, 40, 0.1), []Segment{
			// cut at 960 ms (a 160 ms silence) once 1908 ms were exceeded
			// (chunk 60), the rest goes on from 1120 ms and is cut hard at
			// chunk 95 (3040 ms); the last 128 ms are too short
			{Start: 0, End: ms(990), Decided: ms(1952), Kept: true, Barge: ms(416)},
			{Start: ms(1090), End: ms(3070), Decided: ms(3072), Kept: true, Barge: -1},
			{Start: ms(3072), End: ms(3200), Decided: ms(3936), Kept: false, Barge: -1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Segments(tc.probs, len(tc.probs)*ChunkLen, tc.p)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// params700 are DefaultParams with the end silence, maximum and barge-in the cases are written
// for (700 ms, 15 s, 400 ms), whatever banter's defaults are now.
func params700() Params {
	p := DefaultParams()
	p.MinSilence, p.MaxSpeech, p.BargeIn = 700*time.Millisecond, 15*time.Second, 400*time.Millisecond
	return p
}
