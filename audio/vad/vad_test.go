package vad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
)

const ms = time.Millisecond

// collected is an event with its audio copied out.
type collected struct {
	Event
	audio []int16
}

// feed pushes s (16 kHz mono) frame by frame followed by tail of digital
// silence and returns every event.
func feed(t testing.TB, e *Endpointer, s []int16, tail time.Duration) []collected {
	t.Helper()
	var out []collected
	fl := e.FrameLen()
	s = append(s[:len(s):len(s)], make([]int16, pcm.Speech16k().Len(tail))...)
	for off := 0; off+fl <= len(s); off += fl {
		evs, err := e.Push(s[off : off+fl])
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out = append(out, collected{ev, append([]int16(nil), ev.Audio...)})
		}
	}
	return out
}

func summary(evs []collected) string {
	var b []string
	for _, e := range evs {
		s := fmt.Sprintf("%v#%d.%d", e.Kind, e.Utterance, e.Chunk)
		if e.Kind == EventEnd && e.Final {
			s += "F"
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

// addNoise adds white noise at level dBFS (RMS) with a fixed seed.
func addNoise(s []int16, level float64) []int16 {
	r := rand.New(rand.NewPCG(1, 2))
	amp := 32768 * math.Pow(10, level/20) * 1.7320508 // uniform: RMS = amp/√3
	out := make([]int16, len(s))
	for i, v := range s {
		out[i] = pcm.Clamp16(float32(v) + float32((r.Float64()*2-1)*amp))
	}
	return out
}

// TestFixtureEndpoints checks utterance boundaries on the espeak fixtures
// against the speech extents measured on the original 48 kHz files
// (0.2 s of padding before; speech ends ~0.63 s before the end of file:
// 0.3 s of padding plus espeak's own trailing silence).
func TestFixtureEndpoints(t *testing.T) {
	tests := []struct {
		file        string
		noiseDB     float64 // 0: clean
		start, end  time.Duration
		wantSummary string
	}{
		{"hey-banter-weather.wav", 0, 210 * ms, 2700 * ms, "start#1.0 speaking#1.0 end#1.0F"},
		{"uh-huh.wav", 0, 200 * ms, 570 * ms, "start#1.0 speaking#1.0 end#1.0F"},
		{"two-questions.wav", 0, 200 * ms, 3670 * ms, "start#1.0 speaking#1.0 end#1.0F"},
		{"hey-banter-weather.wav", -55, 210 * ms, 2700 * ms, "start#1.0 speaking#1.0 end#1.0F"},
		{"two-questions.wav", -45, 200 * ms, 3670 * ms, "start#1.0 speaking#1.0 end#1.0F"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s noise %v", tt.file, tt.noiseDB), func(t *testing.T) {
			s := testaudio.Speech16k(t, tt.file)
			tail := 2 * time.Second
			if tt.noiseDB != 0 {
				s = addNoise(append(s, make([]int16, pcm.Speech16k().Len(tail))...), tt.noiseDB)
				tail = 0
			}
			e, err := New(Config{Algorithm: AlgorithmEnergy})
			if err != nil {
				t.Fatal(err)
			}
			evs := feed(t, e, s, tail)
			if got := summary(evs); got != tt.wantSummary {
				t.Fatalf("events %s, want %s", got, tt.wantSummary)
			}
			end := evs[len(evs)-1]
			t.Logf("speech %v..%v", end.SpeechStart, end.SpeechEnd)
			if d := end.SpeechStart - tt.start; d < -40*ms || d > 60*ms {
				t.Errorf("speech start %v, want %v (-40/+60 ms)", end.SpeechStart, tt.start)
			}
			if d := end.SpeechEnd - tt.end; d < -120*ms || d > 80*ms {
				t.Errorf("speech end %v, want %v (-120/+80 ms)", end.SpeechEnd, tt.end)
			}
			// Ends after EndSilence, not before.
			if got := end.At - end.SpeechEnd; got != e.Config().EndSilence {
				t.Errorf("end decided %v after speech end, want %v", got, e.Config().EndSilence)
			}
			// Audio: pre-roll before the first speech frame, post-roll after the last.
			if got := end.SpeechStart - end.AudioStart; got != 200*ms {
				t.Errorf("pre-roll %v, want 200ms", got)
			}
			audioEnd := end.AudioStart + pcm.Speech16k().Duration(len(end.audio))
			if got := audioEnd - end.SpeechEnd; got != 100*ms {
				t.Errorf("post-roll %v, want 100ms", got)
			}
			// The audio is the input at those positions.
			off := pcm.Speech16k().Len(end.AudioStart)
			if snr := pcm.SNR(s[off:off+len(end.audio)], end.audio); !math.IsInf(snr, 1) {
				t.Errorf("utterance audio differs from the input at its position")
			}
		})
	}
}

// TestSplitAtPause: a short end-of-speech silence splits "what do you
// think about pineapple on pizza? ... and be honest" at its 300 ms pause.
func TestSplitAtPause(t *testing.T) {
	e, _ := New(Config{EndSilence: 200 * ms})
	evs := feed(t, e, testaudio.Speech16k(t, "two-questions.wav"), time.Second)
	var ends []collected
	for _, ev := range evs {
		if ev.Kind == EventEnd {
			ends = append(ends, ev)
		}
	}
	if len(ends) != 2 {
		t.Fatalf("events %s, want two utterances", summary(evs))
	}
	// The pause is around 2.6-2.9 s (the "?").
	if ends[0].SpeechEnd < 2400*ms || ends[0].SpeechEnd > 3000*ms || ends[1].SpeechStart < ends[0].SpeechEnd+200*ms {
		t.Errorf("split at %v / %v, want around the pause at 2.6-2.9 s", ends[0].SpeechEnd, ends[1].SpeechStart)
	}
}

// TestLongSpeechIsChunked cuts the 10 s story into chunks of at most 4 s,
// at pauses, with contiguous audio that reassembles to the whole utterance.
func TestLongSpeechIsChunked(t *testing.T) {
	s := testaudio.Speech16k(t, "long-story.wav")
	e, _ := New(Config{MaxUtterance: 4 * time.Second, Algorithm: AlgorithmEnergy})
	evs := feed(t, e, s, 2*time.Second)
	var ends []collected
	for _, ev := range evs {
		if ev.Kind == EventEnd {
			ends = append(ends, ev)
		}
	}
	if len(ends) < 3 {
		t.Fatalf("events %s, want ≥ 3 chunks", summary(evs))
	}
	f := pcm.Speech16k()
	next := ends[0].AudioStart
	var joined []int16
	for i, c := range ends {
		if c.Chunk != i || c.Utterance != 1 || c.Final != (i == len(ends)-1) {
			t.Errorf("chunk %d: #%d.%d final %v", i, c.Utterance, c.Chunk, c.Final)
		}
		if d := f.Duration(len(c.audio)); d > 4*time.Second {
			t.Errorf("chunk %d is %v long", i, d)
		}
		if c.AudioStart != next {
			t.Errorf("chunk %d starts at %v, previous ended at %v", i, c.AudioStart, next)
		}
		next = c.AudioStart + f.Duration(len(c.audio))
		joined = append(joined, c.audio...)
		if i < len(ends)-1 {
			// A cut at a pause: the chunk's last frame is quiet.
			if lvl := pcm.EnergyDB(c.audio[len(c.audio)-320:]); lvl > -50 {
				t.Errorf("chunk %d cut inside speech (last frame %.0f dBFS)", i, lvl)
			}
		}
	}
	off := f.Len(ends[0].AudioStart)
	for i, v := range joined {
		if s[off+i] != v {
			t.Fatalf("joined chunks differ from input at sample %d", i)
		}
	}
	if end := ends[len(ends)-1].SpeechEnd; end < 10*time.Second || end > 10300*ms {
		t.Errorf("story ends at %v, want ~10.16 s", end)
	}
}

func TestRejects(t *testing.T) {
	f := pcm.Speech16k()
	click := make([]int16, f.Len(time.Second))
	for i := f.Len(300 * ms); i < f.Len(400*ms); i++ { // 100 ms burst
		click[i] = int16((i%7 - 3) * 3000)
	}
	hum := make([]int16, f.Len(4*time.Second))
	for i := range hum { // steady 100 Hz hum at about -20 dBFS, from the first sample
		hum[i] = int16(4000 * math.Sin(float64(i)*2*3.141592653589793*100/16000))
	}
	tests := []struct {
		name string
		cfg  Config
		s    []int16
		want string
	}{
		{"silence", Config{}, make([]int16, f.Len(2*time.Second)), ""},
		{"noise at -45 dBFS", Config{}, addNoise(make([]int16, f.Len(5*time.Second)), -45), ""},
		{"100 ms click is too short", Config{}, click, "start#1.0 discard#1.0"},
		{"click kept with both checks off", Config{MinUtterance: -1, MinSpreadDB: -1}, click, "start#1.0 end#1.0F"},
		{"steady hum is not speech", Config{}, hum, "start#1.0 discard#1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Algorithm = AlgorithmEnergy
			e, _ := New(cfg)
			evs := feed(t, e, tt.s, 2*time.Second)
			if got := summary(evs); got != tt.want {
				t.Errorf("events %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSpeakingSignal: Speaking turns true SpeakingMin into speech (for
// barge-in) and false when the utterance ends; Active spans the utterance.
func TestSpeakingSignal(t *testing.T) {
	s := testaudio.Speech16k(t, "hey-banter-weather.wav")
	e, _ := New(Config{SpeakingMin: 300 * ms, Algorithm: AlgorithmEnergy})
	var speakingAt, activeAt, endAt time.Duration
	fl := e.FrameLen()
	s = append(s, make([]int16, 16000)...)
	for off := 0; off+fl <= len(s); off += fl {
		evs, _ := e.Push(s[off : off+fl])
		for _, ev := range evs {
			if ev.Kind == EventSpeaking && !e.Speaking() {
				t.Error("EventSpeaking but Speaking() false")
			}
			if ev.Kind == EventEnd && (e.Speaking() || e.Active()) {
				t.Error("still speaking after EventEnd")
			}
		}
		if e.Active() && activeAt == 0 {
			activeAt = e.Position()
		}
		if e.Speaking() && speakingAt == 0 {
			speakingAt = e.Position()
			if e.Speech() != 300*ms {
				t.Errorf("Speech() %v when Speaking turned true, want 300ms", e.Speech())
			}
		}
		if !e.Active() && e.Speech() != 0 {
			t.Errorf("Speech() %v between utterances", e.Speech())
		}
		if activeAt != 0 && !e.Active() && endAt == 0 {
			endAt = e.Position()
		}
	}
	if activeAt < 250*ms || activeAt > 320*ms {
		t.Errorf("active at %v, want ~0.27 s (start + 60 ms)", activeAt)
	}
	if speakingAt < activeAt+240*ms || speakingAt > activeAt+600*ms {
		t.Errorf("speaking at %v, want ≥ 300 ms of speech after start %v", speakingAt, activeAt)
	}
	if endAt < 3300*ms || endAt > 3500*ms {
		t.Errorf("ended at %v, want ~2.7 s + 0.7 s", endAt)
	}
}

func TestFlush(t *testing.T) {
	s := testaudio.Speech16k(t, "hey-banter-weather.wav")[:16000] // cut mid-speech at 1 s
	e, _ := New(Config{})
	feed(t, e, s, 0)
	if !e.Active() {
		t.Fatal("not active mid-speech")
	}
	evs := e.Flush()
	if len(evs) != 1 || evs[0].Kind != EventEnd || !evs[0].Final || len(evs[0].Audio) == 0 {
		t.Fatalf("flush: %+v", evs)
	}
	if e.Active() || len(e.Flush()) != 0 {
		t.Error("still active after Flush")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{SampleRate: 44110},
		{MaxUtterance: 100 * ms},
		{PreRoll: 10 * time.Second, MaxUtterance: 5 * time.Second},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	e, _ := New(Config{})
	if _, err := e.Push(make([]int16, 100)); err == nil {
		t.Error("short frame accepted")
	}
}

func TestPushDoesNotAllocate(t *testing.T) {
	s := testaudio.Speech16k(t, "long-story.wav")
	e, _ := New(Config{MaxUtterance: 8 * time.Second})
	fl := e.FrameLen()
	// Warm up: one long utterance grows the buffer to MaxUtterance once.
	feed(t, e, s, time.Second)
	off := 0
	if n := testing.AllocsPerRun(len(s)/fl-1, func() {
		_, _ = e.Push(s[off : off+fl])
		off += fl
	}); n != 0 {
		t.Errorf("%v allocs per frame, want 0", n)
	}
}

// BenchmarkPush: one frame through the detector and endpointer, per
// algorithm (energy is the same-run baseline for the others: speech is the
// earlier pitch detector, neural the default).
func BenchmarkPush(b *testing.B) {
	s := testaudio.Speech16k(b, "long-story.wav")
	for _, alg := range []Algorithm{AlgorithmNeural, AlgorithmSpeech, AlgorithmEnergy} {
		b.Run(alg.String(), func(b *testing.B) {
			e, _ := New(Config{Algorithm: alg})
			pushLoop(b, e, s)
		})
	}
}

// BenchmarkPushSpurt is a talking member's stream as a Listener pushes it: a talk spurt (the
// clip bench/voice's members say) and then the 900 ms of zeros it feeds after the member stops
// sending, until the utterance ends (the default end silence before the onset hold; 800 ms now).
func BenchmarkPushSpurt(b *testing.B) {
	s := slices.Concat(testaudio.Speech16k(b, "hey-banter-weather.wav"), make([]int16, 16000*9/10))
	e, _ := New(Config{Algorithm: AlgorithmNeural})
	pushLoop(b, e, s)
}

// pushLoop pushes s through e a frame per iteration, from the start again at its end.
func pushLoop(b *testing.B, e *Endpointer, s []int16) {
	fl := e.FrameLen()
	off := 0
	b.ReportAllocs()
	for b.Loop() {
		if off+fl > len(s) {
			off = 0
		}
		_, _ = e.Push(s[off : off+fl])
		off += fl
	}
}

// BenchmarkEnergy is the same-run baseline: the frame energy alone.
func BenchmarkEnergy(b *testing.B) {
	s := testaudio.Speech16k(b, "long-story.wav")[:320]
	b.ReportAllocs()
	for b.Loop() {
		pcm.EnergyDB(s)
	}
}

// FuzzEndpointer drives the state machine with arbitrary frame sequences
// (each input byte picks a frame: silence, quiet or loud noise, a tone; the
// configuration is small so chunking and discards happen often) and checks
// the invariants the voice layer relies on: events in order per utterance,
// chunks contiguous and numbered, Speaking only inside an utterance, audio
// exactly the input at its position.
func FuzzEndpointer(f *testing.F) {
	f.Add([]byte{0, 0, 3, 3, 3, 3, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 2, 1, 2, 3, 0, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(endpointerInvariants)
}

func endpointerInvariants(t *testing.T, data []byte) {
	e, err := New(Config{StartSpeech: 40 * ms, EndSilence: 100 * ms, MinUtterance: 60 * ms,
		MaxUtterance: time.Second, CutSearch: 200 * ms, PreRoll: 60 * ms, PostRoll: 40 * ms, SpeakingMin: 80 * ms})
	if err != nil {
		t.Fatal(err)
	}
	const fl = 320
	data = data[:min(len(data), 3000)] // bound the cost of one input
	var input []int16
	r := rand.New(rand.NewPCG(3, 4))
	var utt uint64
	active, nextChunk := false, 0
	var chunkEnd time.Duration
	for i, b := range data {
		frame := make([]int16, fl)
		amp := []float64{0, 300, 3000, 12000}[b%4]
		for j := range frame {
			if b%8 >= 4 { // tone with a level that varies by frame
				frame[j] = int16(amp * (0.3 + 0.7*float64(i%5)/4) * math.Sin(float64(j)*0.3))
			} else {
				frame[j] = int16((r.Float64()*2 - 1) * amp)
			}
		}
		input = append(input, frame...)
		evs, err := e.Push(frame)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			switch ev.Kind {
			case EventStart:
				if active || ev.Utterance != utt+1 {
					t.Fatalf("start #%d while active=%v after #%d", ev.Utterance, active, utt)
				}
				utt, active, nextChunk = ev.Utterance, true, 0
			case EventSpeaking:
				if !active || ev.Utterance != utt {
					t.Fatalf("speaking outside utterance")
				}
			case EventEnd, EventDiscard:
				if !active || ev.Utterance != utt || ev.Chunk != nextChunk {
					t.Fatalf("%v #%d.%d, expected #%d.%d active=%v", ev.Kind, ev.Utterance, ev.Chunk, utt, nextChunk, active)
				}
				if ev.Kind == EventEnd && ev.Chunk > 0 && ev.AudioStart != chunkEnd {
					t.Fatalf("chunk %d starts at %v, previous ended at %v", ev.Chunk, ev.AudioStart, chunkEnd)
				}
				off := pcm.Speech16k().Len(ev.AudioStart)
				if off+len(ev.Audio) > len(input) || !slices.Equal(ev.Audio, input[off:off+len(ev.Audio)]) {
					t.Fatalf("chunk audio is not the input at %v", ev.AudioStart)
				}
				if d := pcm.Speech16k().Duration(len(ev.Audio)); d > time.Second {
					t.Fatalf("chunk of %v exceeds MaxUtterance", d)
				}
				chunkEnd = ev.AudioStart + pcm.Speech16k().Duration(len(ev.Audio))
				nextChunk++
				if ev.Final {
					active = false
				}
			}
		}
		if e.Active() != active {
			t.Fatalf("Active() %v, events say %v", e.Active(), active)
		}
		if e.Speaking() && !active {
			t.Fatal("Speaking outside an utterance")
		}
	}
}

// TestEndpoints24k runs the fixture endpoint check at 24 kHz, the realtime
// API's rate (frames of 480 samples, rate-scaled zero-crossing threshold).
func TestEndpoints24k(t *testing.T) {
	s16 := testaudio.Speech16k(t, "two-questions.wav")
	r, _ := resample.New(pcm.Speech16k(), pcm.Mono24k())
	s := make([]int16, r.MaxOut(len(s16)))
	n, _ := r.Process(s, s16)
	s = append(s[:n], make([]int16, 48000)...)
	e, err := New(Config{SampleRate: 24000})
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for off := 0; off+e.FrameLen() <= len(s); off += e.FrameLen() {
		got, _ := e.Push(s[off : off+e.FrameLen()])
		evs = append(evs, got...)
	}
	if len(evs) != 3 || evs[2].Kind != EventEnd {
		t.Fatalf("events %v, want start speaking end", evs)
	}
	if d := evs[2].SpeechStart - 200*ms; d < -40*ms || d > 60*ms {
		t.Errorf("speech start %v, want 0.2 s", evs[2].SpeechStart)
	}
	if d := evs[2].SpeechEnd - 3670*ms; d < -120*ms || d > 80*ms {
		t.Errorf("speech end %v, want 3.67 s", evs[2].SpeechEnd)
	}
	// speech, pre-roll, post-roll and the network's hold after the last word
	if got := pcm.Mono24k().Duration(len(evs[2].Audio)); got < 3600*ms || got > 3900*ms {
		t.Errorf("audio %v", got)
	}
}

func TestDetector(t *testing.T) {
	d, err := NewDetector(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := testaudio.Speech16k(t, "uh-huh.wav")
	var classes []Class
	for off := 0; off+320 <= len(s); off += 320 {
		classes = append(classes, d.Classify(s[off:off+320]).Class)
	}
	// 0.2 s of silence (10 frames), then "uh huh" (speech by 0.24 s).
	for i, c := range classes[:10] {
		if c != ClassSilence {
			t.Errorf("frame %d in the lead silence is %v", i, c)
		}
	}
	if classes[11] != ClassSpeech || classes[12] != ClassSpeech {
		t.Errorf("frames 11-12 are %v %v, want speech", classes[11], classes[12])
	}
	if _, err := NewDetector(Config{SampleRate: 1000}); err == nil {
		t.Error("1 kHz accepted")
	}
	for _, c := range []Class{ClassUnknown, ClassSilence, ClassWeak, ClassSpeech} {
		if c.String() == "" {
			t.Errorf("%d has no name", int(c))
		}
	}
}
