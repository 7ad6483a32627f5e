package voice

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/config"
	dvoice "github.com/banterbot/banter/discord/voice"
)

// TestHearClock: one hearing clock serves the speakers of several sessions:
// every frame of every stream reaches its Listener, a blocked member's
// frames are taken and not decoded; a speaker whose stream ends, and every
// speaker of a session that ends, are let go (the sessions' wind-down
// returns), and the clock's goroutine stops once none is left.
func TestHearClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := config.Default()
	cfg.Permissions.BlockedUserIDs = []string{"u1-2"}
	reg := prometheus.NewRegistry()
	am := audio.NewMetrics(reg)
	svc := &Service{opts: Options{Config: func() *config.Config { return cfg }, Now: time.Now, AudioMetrics: am}}
	const perSession, frames = 3, 10
	var sessions []*session
	var streams [][]chan dvoice.Frame
	for i := range 2 {
		s := &session{svc: svc, speakers: map[string]*speaker{}}
		s.lg = slog.New(slog.DiscardHandler)
		s.ctx, s.cancel = context.WithCancel(ctx)
		defer s.cancel()
		var chs []chan dvoice.Frame
		for j := range perSession {
			ch := make(chan dvoice.Frame, frames)
			user := fmt.Sprintf("u%d-%d", i, j)
			sp := &speaker{s: s, userID: user, frames: ch}
			l, err := audio.NewListener(s.listenerConfig(), sp.handle, am)
			if err != nil {
				t.Fatal(err)
			}
			sp.l, sp.endTicks = l, 25
			s.speakers[user] = sp
			s.wg.Add(1)
			svc.hear.add(sp)
			chs = append(chs, ch)
		}
		sessions, streams = append(sessions, s), append(streams, chs)
	}
	// Discord's silence frames: taken through the whole pipeline, no utterance.
	for _, chs := range streams {
		for _, ch := range chs {
			for k := range frames {
				ch <- dvoice.Frame{SSRC: 1, Sequence: uint16(k), Timestamp: uint32(k) * 960, Opus: []byte{0xF8, 0xFF, 0xFE}}
			}
		}
	}
	const decoded = (2*perSession - 1) * frames // all but the blocked member's
	for accepted(t, reg) < decoded || len(streams[1][2]) > 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%v frames decoded, want %d; %d of the blocked member's waiting", accepted(t, reg), decoded, len(streams[1][2]))
		case <-time.After(10 * time.Millisecond):
		}
	}
	if n := accepted(t, reg); n != decoded {
		t.Errorf("%v frames decoded, want %d (the blocked member's are not)", n, decoded)
	}
	// Session 0's streams end; session 1 ends.
	for _, ch := range streams[0] {
		close(ch)
	}
	sessions[1].cancel()
	for i, s := range sessions {
		done := make(chan struct{})
		go func() { s.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("session %d: the hearing clock kept its speakers", i)
		}
		s.mu.Lock()
		left := len(s.speakers)
		s.mu.Unlock()
		if left != 0 {
			t.Errorf("session %d: %d speakers still listed", i, left)
		}
	}
	if err := svc.hear.wait(ctx); err != nil {
		t.Fatalf("the hearing clock did not stop: %v", err)
	}
	if svc.HearingStats().Ticks == 0 {
		t.Error("no ticks counted")
	}
}

// accepted returns the packets offered to the Listeners' jitter buffers.
func accepted(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "banter_audio_packets_total" {
			continue
		}
		var n float64
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue() // accepted, restarted (a stream's first), ...
		}
		return n
	}
	return 0
}
