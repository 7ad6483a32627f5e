package realtime

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	dto "github.com/prometheus/client_model/go"
)

// tone returns d of a 440 Hz tone as pcm16 24 kHz mono bytes.
func tone(d time.Duration) []byte {
	n := pcm.Mono24k().Samples(d)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
	}
	return pcm.AppendBytes(nil, s)
}

// testSink records frames; when block is set, each call waits for ctx or
// for a release.
type testSink struct {
	mu      sync.Mutex
	frames  int
	stops   int
	out     chan struct{} // one per accepted frame
	block   bool
	release chan struct{}
}

func newTestSink() *testSink {
	return &testSink{out: make(chan struct{}, 4096), release: make(chan struct{})}
}

func (s *testSink) send(ctx context.Context, _ []byte) error {
	if s.block {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.release:
		}
	}
	s.mu.Lock()
	s.frames++
	s.mu.Unlock()
	s.out <- struct{}{}
	return nil
}

func (s *testSink) stop(context.Context) error {
	s.mu.Lock()
	s.stops++
	s.mu.Unlock()
	return nil
}

func (s *testSink) counts() (frames, stops int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames, s.stops
}

// startPlayer runs a player on sink until the test ends.
func startPlayer(tb testing.TB, sink *testSink, m *Metrics) *player {
	tb.Helper()
	t, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := newPlayer(ctx, t, sink.send, sink.stop, m, slog.New(slog.DiscardHandler), time.Now)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return p
}

func waitFrames(t *testing.T, s *testSink, n int) {
	t.Helper()
	for range n {
		select {
		case <-s.out:
		case <-time.After(5 * time.Second):
			f, _ := s.counts()
			t.Fatalf("sink got %d frames, want %d", f, n)
		}
	}
}

func TestPlayerPlaysWholeItem(t *testing.T) {
	tests := []struct {
		name   string
		deltas []time.Duration
		frames int
	}{
		{"one delta", []time.Duration{200 * time.Millisecond}, 10},
		{"odd sizes", []time.Duration{30 * time.Millisecond, 50 * time.Millisecond, 25 * time.Millisecond}, 6}, // 105 ms → 5 frames + padded flush
		{"short", []time.Duration{10 * time.Millisecond}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := newTestSink()
			p := startPlayer(t, sink, nil)
			for _, d := range tt.deltas {
				p.enqueue("item_1", tone(d))
			}
			p.end()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := p.waitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			frames, stops := sink.counts()
			if frames != tt.frames || stops != 1 {
				t.Errorf("frames %d stops %d, want %d and 1", frames, stops, tt.frames)
			}
			if item, played := p.position(); item != "item_1" || played != uint64(tt.frames) {
				t.Errorf("position %q %d", item, played)
			}
		})
	}
}

// TestPlayerStopNowIsExact: stopNow cancels the frame in flight, drops the
// rest and reports exactly the frames the sink accepted.
func TestPlayerStopNowIsExact(t *testing.T) {
	sink := newTestSink()
	sink.block = true
	p := startPlayer(t, sink, nil)
	p.enqueue("item_1", tone(time.Second))
	for range 7 {
		sink.release <- struct{}{}
	}
	waitFrames(t, sink, 7)
	s := p.stopNow() // the 8th call is blocked in the sink: it is cancelled
	if s.item != "item_1" || s.played != 7 || !s.busy {
		t.Fatalf("stopNow = %+v, want item_1, 7 played, busy", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.waitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if frames, stops := sink.counts(); frames != 7 || stops != 1 {
		t.Errorf("after stop: %d frames, %d stops", frames, stops)
	}
	// Audio still arriving for the item after the stop plays as new audio
	// only when queued again; a new item starts from zero.
	sink.block = false
	p.enqueue("item_2", tone(40*time.Millisecond))
	p.end()
	if err := p.waitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if item, played := p.position(); item != "item_2" || played != 2 {
		t.Errorf("position %q %d, want item_2 2", item, played)
	}
}

func TestPlayerSinkErrorDropsItem(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tk, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	sink := func(context.Context, []byte) error {
		calls++
		return errors.New("voice: connection closed")
	}
	p := newPlayer(ctx, tk, sink, nil, nil, slog.New(slog.DiscardHandler), time.Now)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	p.enqueue("item_1", tone(time.Second))
	p.end()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := p.waitIdle(wctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if calls != 1 {
		t.Errorf("sink called %d times after failing, want 1 (rest of the item dropped)", calls)
	}
}

func TestPlayerQueueBound(t *testing.T) {
	sink := newTestSink()
	sink.block = true
	m := NewMetrics(nil)
	p := startPlayer(t, sink, m)
	p.max = 2 * frameBytes
	p.enqueue("item_1", tone(40*time.Millisecond))
	p.enqueue("item_1", tone(40*time.Millisecond)) // over the bound: dropped
	var d dto.Metric
	if err := m.dropped.Write(&d); err != nil {
		t.Fatal(err)
	}
	if got := d.GetCounter().GetValue(); got != float64(2*frameBytes) {
		t.Errorf("dropped %v bytes, want %d", got, 2*frameBytes)
	}
	if s := p.stopNow(); !s.busy {
		t.Error("first delta not queued")
	}
}

// TestPlayerFrameAllocs locks in the steady state: queueing 20 ms of model
// audio, resampling, encoding and handing the frame to the sink (across the
// player goroutine) allocates nothing.
func TestPlayerFrameAllocs(t *testing.T) {
	sink := newTestSink()
	p := startPlayer(t, sink, NewMetrics(nil))
	frame := tone(20 * time.Millisecond)
	for range 20 { // warm up: queue grown, item known
		p.enqueue("item_1", frame)
		<-sink.out
	}
	if n := testing.AllocsPerRun(500, func() {
		p.enqueue("item_1", frame)
		<-sink.out
	}); n != 0 {
		t.Errorf("%.1f allocations per 20 ms frame, want 0", n)
	}
}
