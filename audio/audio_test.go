package audio

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/internal/testaudio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/vad"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

const ms = time.Millisecond

// convert runs s through a fresh resampler from in to out, compensating
// the filter delay so timings are preserved.
func convert(t testing.TB, s []int16, in, out pcm.Format) []int16 {
	t.Helper()
	r, err := resample.New(in, out)
	if err != nil {
		t.Fatal(err)
	}
	s = append(s[:len(s):len(s)], make([]int16, in.Len(r.Delay())+in.Channels*2)...)
	dst := make([]int16, r.MaxOut(len(s)))
	n, _ := r.Process(dst, s)
	d := out.Len(r.Delay())
	return dst[d:n]
}

// sent is one packet as the sender made it, with the wall-clock tick
// (20 ms units) at which it was sent.
type sent struct {
	tick int
	pkt  jitter.Packet
}

// talk encodes 16 kHz mono speech into Discord packets starting at wall
// tick start, sequence seq0, timestamp ts0. With dtx, silent frames are not
// sent (Discord clients stop transmitting in silence) but still advance the
// timestamp.
func talk(t testing.TB, speech []int16, start int, seq0 uint16, ts0 uint32, dtx bool) ([]sent, uint16, uint32) {
	t.Helper()
	s48 := convert(t, speech, pcm.Speech16k(), pcm.Discord())
	enc, err := opus.NewEncoder(opus.EncoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []sent
	buf := make([]byte, opus.MaxPacketSize)
	seq, ts := seq0, ts0
	for i := 0; (i+1)*opus.FrameLen <= len(s48); i++ {
		frame := s48[i*opus.FrameLen : (i+1)*opus.FrameLen]
		if !dtx || pcm.EnergyDB(frame) > -60 { // a client's own VAD gate
			n, err := enc.Encode(frame, buf)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sent{start + i, jitter.Packet{SSRC: 42, Seq: seq, Timestamp: ts, Payload: append([]byte(nil), buf[:n]...)}})
			seq++
		}
		ts += opus.FrameSamples
	}
	return out, seq, ts
}

type recorder struct {
	evs   []vad.Event
	audio [][]int16
}

func (r *recorder) handle(ev vad.Event) {
	r.audio = append(r.audio, append([]int16(nil), ev.Audio...))
	ev.Audio = nil
	r.evs = append(r.evs, ev)
}

func (r *recorder) kinds() string {
	s := ""
	for _, e := range r.evs {
		if s != "" {
			s += " "
		}
		s += e.Kind.String()
	}
	return s
}

// deliver plays packets into l on a 20 ms wall clock: each tick, the
// packets due are pushed in the order given by arrival, then Tick is called.
func deliver(l *Listener, pkts []sent, extraTicks int) {
	last := 0
	for _, p := range pkts {
		last = max(last, p.tick)
	}
	i := 0
	for tick := 0; tick <= last+extraTicks; tick++ {
		for i < len(pkts) && pkts[i].tick <= tick {
			l.Push(pkts[i].pkt)
			i++
		}
		l.Tick()
	}
}

func TestListener(t *testing.T) {
	speech := testaudio.Speech16k(t, "hey-banter-weather.wav")
	base, _, _ := talk(t, speech, 0, 65500, 123456, false) // sequence wraps mid-utterance
	type mangle func([]sent) []sent
	swap := func(p []sent) []sent { // every 7th packet arrives after its successor
		out := append([]sent(nil), p...)
		for i := 5; i+1 < len(out); i += 7 {
			out[i].pkt, out[i+1].pkt = out[i+1].pkt, out[i].pkt
		}
		return out
	}
	dup := func(p []sent) []sent { // every 10th packet arrives twice
		var out []sent
		for i, s := range p {
			out = append(out, s)
			if i%10 == 3 {
				out = append(out, s)
			}
		}
		return out
	}
	loss := func(p []sent) []sent { // 5 % loss, including a burst of 3
		var out []sent
		for i, s := range p {
			if i%20 == 9 || (i >= 60 && i < 63) {
				continue
			}
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name     string
		mangle   mangle
		minSNR   float64
		wantLost uint64
		same     bool // audio identical to the clean run's
	}{
		{"clean", func(p []sent) []sent { return p }, 8, 0, true},
		{"reordered", swap, 8, 0, true},
		{"duplicated", dup, 8, 0, true},
		{"lossy", loss, 5, 11, false},
	}
	for _, direct := range []bool{false, true} {
		var clean []int16
		for _, tt := range tests {
			name := tt.name
			if direct {
				name = "direct decode " + name
			}
			t.Run(name, func(t *testing.T) {
				var rec recorder
				reg := prometheus.NewRegistry()
				m := NewMetrics(reg)
				l, err := NewListener(ListenerConfig{DirectDecode: direct, VAD: vad.Config{Algorithm: vad.AlgorithmEnergy}}, rec.handle, m)
				if err != nil {
					t.Fatal(err)
				}
				deliver(l, tt.mangle(base), 100)
				if got := rec.kinds(); got != "start speaking end" {
					t.Fatalf("events %q, want one utterance", got)
				}
				end, audio := rec.evs[2], rec.audio[2]
				t.Logf("speech %v..%v, %v of audio", end.SpeechStart, end.SpeechEnd, pcm.Speech16k().Duration(len(audio)))
				// Fixture speech is 0.21..2.70 s; the codec and filters add < 15 ms.
				if d := end.SpeechStart - 210*ms; d < -40*ms || d > 60*ms {
					t.Errorf("speech start %v, want 0.21 s", end.SpeechStart)
				}
				if d := end.SpeechEnd - 2700*ms; d < -120*ms || d > 80*ms {
					t.Errorf("speech end %v, want 2.70 s", end.SpeechEnd)
				}
				// The utterance audio is the speech, through Opus and back.
				off := pcm.Speech16k().Len(end.AudioStart)
				ref := speech[off : off+len(audio)]
				snr := bestSNR(ref, audio, 320)
				t.Logf("SNR against the fixture %.1f dB", snr)
				if snr < tt.minSNR {
					t.Errorf("SNR %.1f dB, want ≥ %.0f", snr, tt.minSNR)
				}
				if diff := pcm.EnergyDB(audio) - pcm.EnergyDB(ref); math.Abs(diff) > 2 {
					t.Errorf("level differs by %.1f dB", diff)
				}
				if tt.name == "clean" {
					clean = audio
				}
				if tt.same && !slices.Equal(audio, clean) {
					t.Error("audio differs from the clean run: reordering is not lossless")
				}
				st := l.Stats()
				if st.Lost != tt.wantLost {
					t.Errorf("lost %d, want %d", st.Lost, tt.wantLost)
				}
				if got := counterValue(m.lost); got != float64(tt.wantLost) {
					t.Errorf("banter_audio_packets_lost_total %v, want %d", got, tt.wantLost)
				}
				if got := counterValue(m.byEvent[vad.EventEnd]); got != 1 {
					t.Errorf("end events counted %v", got)
				}
			})
		}
	}
}

// bestSNR aligns got against want over 0..maxDelay samples.
func bestSNR(want, got []int16, maxDelay int) float64 {
	best := math.Inf(-1)
	for d := 0; d <= maxDelay && d < len(got); d++ {
		best = max(best, pcm.SNR(want[:len(want)-d], got[d:]))
	}
	return best
}

// TestListenerPauses: the speaker's client stops sending in silence (DTX)
// and between two utterances; Tick must end the first utterance on time,
// before the second one's packets arrive.
func TestListenerPauses(t *testing.T) {
	a, seq, ts := talk(t, testaudio.Speech16k(t, "hey-banter-weather.wav"), 0, 100, 0, true)
	// 3 s of no packets, then the second utterance: timestamps jump.
	startB := a[len(a)-1].tick + 150
	b, _, _ := talk(t, testaudio.Speech16k(t, "uh-huh.wav"), startB, seq, ts+150*opus.FrameSamples, true)
	var rec recorder
	var endTick, tick int
	l, _ := NewListener(ListenerConfig{VAD: vad.Config{Algorithm: vad.AlgorithmEnergy}}, func(ev vad.Event) {
		if ev.Kind == vad.EventEnd && endTick == 0 {
			endTick = tick
		}
		rec.handle(ev)
	}, nil)
	pkts := append(a, b...)
	i := 0
	for tick = 0; tick < startB+200; tick++ {
		for i < len(pkts) && pkts[i].tick <= tick {
			l.Push(pkts[i].pkt)
			i++
		}
		l.Tick()
	}
	if got := rec.kinds(); got != "start speaking end start speaking end" {
		t.Fatalf("events %q, want two utterances", got)
	}
	// The first ends EndSilence (700 ms = 35 ticks) after its last speech
	// frame, at most that plus the jitter window (3 ticks) after its last
	// packet, long before the second utterance.
	lastA := a[len(a)-1].tick
	if d := endTick - lastA; d < 3 || d > 38 {
		t.Errorf("first utterance ended %d ticks after its last packet, want 3..38", d)
	}
	if d := rec.evs[2].At - rec.evs[2].SpeechEnd; d != 700*ms {
		t.Errorf("first utterance ended %v after its speech, want 700ms", d)
	}
	if rec.evs[2].SpeechEnd >= rec.evs[3].SpeechStart {
		t.Errorf("utterances overlap: %v / %v", rec.evs[2].SpeechEnd, rec.evs[3].SpeechStart)
	}
	if d := pcm.Speech16k().Duration(len(rec.audio[5])); d < 500*ms || d > 900*ms {
		t.Errorf("second utterance audio %v, want ~0.37 s speech + rolls", d)
	}
}

// TestListenerMalformed: garbage packets are counted and concealed, the
// stream continues.
func TestListenerMalformed(t *testing.T) {
	pkts, _, _ := talk(t, testaudio.Speech16k(t, "uh-huh.wav"), 0, 1, 0, false)
	for i := 10; i < len(pkts); i += 9 {
		pkts[i].pkt.Payload = []byte{0x03, 0x00} // code 3 with zero frames
	}
	var rec recorder
	m := NewMetrics(prometheus.NewRegistry())
	l, _ := NewListener(ListenerConfig{VAD: vad.Config{Algorithm: vad.AlgorithmEnergy}}, rec.handle, m)
	deliver(l, pkts, 60)
	if got := rec.kinds(); got != "start speaking end" {
		t.Errorf("events %q", got)
	}
	if got := counterValue(m.malformed); got < 5 {
		t.Errorf("malformed counted %v, want ≥ 5", got)
	}
}

func TestListenerFlushAndRealtimeFormat(t *testing.T) {
	pkts, _, _ := talk(t, testaudio.Speech16k(t, "hey-banter-weather.wav"), 0, 1, 0, false)
	var rec recorder
	l, err := NewListener(ListenerConfig{Format: pcm.Mono24k(), VAD: vad.Config{Algorithm: vad.AlgorithmEnergy}}, rec.handle, nil)
	if err != nil {
		t.Fatal(err)
	}
	deliver(l, pkts[:75], 0) // speaker leaves mid-sentence at 1.5 s
	if !l.Active() || !l.Speaking() {
		t.Fatal("not speaking mid-sentence")
	}
	l.Flush()
	if got := rec.kinds(); got != "start speaking end" {
		t.Fatalf("events %q", got)
	}
	if d := pcm.Mono24k().Duration(len(rec.audio[2])); d < 1200*ms || d > 1600*ms {
		t.Errorf("flushed audio %v at 24 kHz, want ~1.3-1.5 s", d)
	}
	// The speaker comes back with a new stream: heard as a new utterance.
	again, _, _ := talk(t, testaudio.Speech16k(t, "uh-huh.wav"), 0, 5000, 777, false)
	deliver(l, again, 60)
	if got := rec.kinds(); got != "start speaking end start speaking end" {
		t.Errorf("after Flush and a new stream: %q", got)
	}
	if l.Format() != pcm.Mono24k() {
		t.Errorf("Format() %v", l.Format())
	}
	if _, err := NewListener(ListenerConfig{Format: pcm.Discord()}, rec.handle, nil); err == nil {
		t.Error("stereo listener format accepted")
	}
	if _, err := NewListener(ListenerConfig{Format: pcm.Format{Rate: 22050, Channels: 1}, DirectDecode: true}, rec.handle, nil); err == nil {
		t.Error("direct decode to 22.05 kHz accepted")
	}
	if _, err := NewListener(ListenerConfig{}, nil, nil); err == nil {
		t.Error("nil handler accepted")
	}
}

func TestListenerDoesNotAllocate(t *testing.T) {
	for _, direct := range []bool{false, true} {
		listenerAllocs(t, direct)
	}
}

func listenerAllocs(t *testing.T, direct bool) {
	pkts, _, _ := talk(t, testaudio.Speech16k(t, "long-story.wav"), 0, 1, 0, false)
	n := 0
	l, _ := NewListener(ListenerConfig{DirectDecode: direct}, func(vad.Event) { n++ }, NewMetrics(prometheus.NewRegistry()))
	// Warm-up pass: buffers that grow with the longest utterance reach
	// their size; the measured pass repeats the audio as a continuation of
	// the stream (sequence and timestamps running on) with a packet lost
	// every 15.
	deliver(l, pkts, 0)
	shift := uint16(len(pkts))
	i := 0
	allocs := testing.AllocsPerRun(len(pkts)-1, func() {
		p := pkts[i].pkt
		p.Seq += shift
		p.Timestamp += uint32(shift) * opus.FrameSamples
		if i%15 != 7 {
			l.Push(p)
		}
		l.Tick()
		i++
	})
	if st := l.Stats(); st.Lost < uint64(len(pkts)/15) || st.Late != 0 || st.Restarts != 1 {
		t.Errorf("stats %+v: the measured pass was not one continuous lossy stream", st)
	}
	if allocs != 0 {
		t.Errorf("direct %v: %v allocs per packet, want 0", direct, allocs)
	}
	if n == 0 {
		t.Error("no events: the pipeline did not run")
	}
}

func counterValue(c prometheus.Counter) float64 {
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		return math.NaN()
	}
	return d.GetCounter().GetValue()
}

// FuzzListener pushes arbitrary packet streams (sequence, timestamp and
// payload all hostile) with ticks in between: the listener must never
// panic, and every event must be well formed.
func FuzzListener(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 3, 0xF8, 0xFF, 0xFE, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 2, 0x03, 0x00, 0})
	f.Add([]byte{0x80, 0, 0x10, 0, 4, 0xfc, 0x83, 0x01, 0x02, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		direct := len(data) > 0 && data[0]&0x80 != 0 // both decode paths
		l, err := NewListener(ListenerConfig{DirectDecode: direct, VAD: vad.Config{Algorithm: vad.AlgorithmEnergy}}, func(ev vad.Event) {
			if ev.Kind == vad.EventUnknown || (ev.Kind == vad.EventEnd && ev.SpeechEnd < ev.SpeechStart) {
				t.Fatalf("bad event %+v", ev)
			}
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Records: seq(2) ts-step(2) len(1) payload(len) ticks(1).
		data = data[:min(len(data), 8000)] // bound the cost of one input
		var ts uint32
		for len(data) >= 5 {
			seq := uint16(data[0])<<8 | uint16(data[1])
			ts += uint32(data[2])<<8 | uint32(data[3])
			n := min(int(data[4]), len(data)-5)
			payload := data[5 : 5+n]
			data = data[5+n:]
			l.Push(jitter.Packet{SSRC: 1, Seq: seq, Timestamp: ts, Payload: payload})
			if len(data) > 0 {
				for range data[0] % 8 {
					l.Tick()
				}
				data = data[1:]
			}
		}
		l.Flush()
	})
}

// TestListenersShareMetrics runs one Listener per goroutine, as the voice
// layer does per speaker, all counting into one Metrics (run with -race).
func TestListenersShareMetrics(t *testing.T) {
	pkts, _, _ := talk(t, testaudio.Speech16k(t, "uh-huh.wav"), 0, 1, 0, false)
	m := NewMetrics(prometheus.NewRegistry())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var rec recorder
			l, err := NewListener(ListenerConfig{DirectDecode: true, VAD: vad.Config{Algorithm: vad.AlgorithmEnergy}}, rec.handle, m)
			if err != nil {
				t.Error(err)
				return
			}
			deliver(l, pkts, 60)
			if rec.kinds() != "start speaking end" {
				t.Errorf("events %q", rec.kinds())
			}
		})
	}
	wg.Wait()
	if got := counterValue(m.byEvent[vad.EventEnd]); got != 4 {
		t.Errorf("%v utterances counted, want 4", got)
	}
	if got := counterValue(m.byResult[jitter.PushAccepted]); got != float64(4*(len(pkts)-1)) {
		t.Errorf("%v packets accepted, want %d", got, 4*(len(pkts)-1))
	}
}

// TestListenerSkipsSilenceFrames: the five silence frames (F8 FF FE) a
// client sends after each talk spurt are not decoded: they are digital
// silence (a decoder gives exactly zeros for them), the Listener feeds
// zeros in their place, and the endpoints are those of the same stream
// without them.
func TestListenerSkipsSilenceFrames(t *testing.T) {
	dec, err := opus.NewDecoderFormat(16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int16, 320)
	if n, err := dec.Decode([]byte{0xF8, 0xFF, 0xFE}, out); err != nil || n != 320 || slices.ContainsFunc(out, func(v int16) bool { return v != 0 }) {
		t.Fatalf("silence frame decodes to %d samples (err %v), not all zero", n, err)
	}
	a, seq, ts := talk(t, testaudio.Speech16k(t, "hey-banter-weather.wav"), 0, 100, 0, true)
	last := a[len(a)-1]
	var quiet []sent
	for i := range 5 {
		quiet = append(quiet, sent{last.tick + 1 + i, jitter.Packet{SSRC: 42, Seq: seq + uint16(i), Timestamp: last.pkt.Timestamp + uint32(i+1)*opus.FrameSamples, Payload: []byte{0xF8, 0xFF, 0xFE}}})
	}
	startB := last.tick + 100
	b, _, _ := talk(t, testaudio.Speech16k(t, "two-questions.wav"), startB, seq+5, ts+100*opus.FrameSamples, true)
	b2, _, _ := talk(t, testaudio.Speech16k(t, "two-questions.wav"), startB, seq, ts+100*opus.FrameSamples, true)
	run := func(pkts []sent) recorder {
		var rec recorder
		l, err := NewListener(ListenerConfig{DirectDecode: true}, rec.handle, nil)
		if err != nil {
			t.Fatal(err)
		}
		deliver(l, pkts, 100)
		return rec
	}
	with := run(slices.Concat(a, quiet, b))
	without := run(slices.Concat(a, b2))
	if got, want := with.kinds(), "start speaking end start speaking end"; got != want || without.kinds() != want {
		t.Fatalf("events %q with silence frames, %q without, want %q", got, without.kinds(), want)
	}
	for i := range with.evs {
		if with.evs[i].SpeechStart != without.evs[i].SpeechStart || with.evs[i].SpeechEnd != without.evs[i].SpeechEnd {
			t.Errorf("event %d: speech %v..%v with the silence frames, %v..%v without", i,
				with.evs[i].SpeechStart, with.evs[i].SpeechEnd, without.evs[i].SpeechStart, without.evs[i].SpeechEnd)
		}
	}
}

// TestListenerSkipsDTX: a client in discontinuous transmission sends a TOC-only
// packet every 400 ms while quiet; the Listener takes each as 20 ms of silence
// without decoding (no concealment, no comfort noise), and the endpoints are those
// of the same talk with nothing sent in the pause.
func TestListenerSkipsDTX(t *testing.T) {
	a, seq, ts := talk(t, testaudio.Speech16k(t, "hey-banter-weather.wav"), 0, 100, 0, true)
	last := a[len(a)-1]
	var dtx []sent
	for i := range 5 { // at 400 ms, 800 ms, ... of the pause
		k := (i + 1) * 20
		dtx = append(dtx, sent{last.tick + k, jitter.Packet{SSRC: 42, Seq: seq + uint16(i), Timestamp: last.pkt.Timestamp + uint32(k)*opus.FrameSamples, Payload: []byte{0xF8}}})
	}
	startB := last.tick + 120
	b, _, _ := talk(t, testaudio.Speech16k(t, "two-questions.wav"), startB, seq+5, ts+120*opus.FrameSamples, true)
	b2, _, _ := talk(t, testaudio.Speech16k(t, "two-questions.wav"), startB, seq, ts+120*opus.FrameSamples, true)
	run := func(pkts []sent) (recorder, uint64) {
		var rec recorder
		l, err := NewListener(ListenerConfig{DirectDecode: true}, rec.handle, nil)
		if err != nil {
			t.Fatal(err)
		}
		deliver(l, pkts, 100)
		return rec, l.Stats().Accepted
	}
	with, n := run(slices.Concat(a, dtx, b))
	without, m := run(slices.Concat(a, b2))
	if n != m+5 {
		t.Fatalf("%d packets accepted with DTX, %d without: the DTX packets did not reach the pipeline", n, m)
	}
	if got, want := with.kinds(), "start speaking end start speaking end"; got != want || without.kinds() != want {
		t.Fatalf("events %q with DTX packets, %q without, want %q", got, without.kinds(), want)
	}
	for i := range with.evs {
		if with.evs[i].SpeechStart != without.evs[i].SpeechStart || with.evs[i].SpeechEnd != without.evs[i].SpeechEnd {
			t.Errorf("event %d: speech %v..%v with DTX, %v..%v without", i,
				with.evs[i].SpeechStart, with.evs[i].SpeechEnd, without.evs[i].SpeechStart, without.evs[i].SpeechEnd)
		}
	}
}
