package voice

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

const (
	testGuild   = "1100000000000000001"
	testChannel = "1100000000000000003"
	testBot     = "1100000000000000100"
	testHuman   = "1100000000000000200"
)

var tokenSeq atomic.Int64

// simConfig authorizes a fresh voice session for user on s and returns the
// Config that connects to it (TLS through the simulator's CA).
func simConfig(t testing.TB, s *voicesim.Server, user string, m *Metrics) Config {
	t.Helper()
	n := tokenSeq.Add(1)
	sess := voicesim.Session{GuildID: testGuild, ChannelID: testChannel, UserID: user,
		SessionID: fmt.Sprintf("session-%d", n), Token: fmt.Sprintf("token-%d", n)}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CACertPEM()) {
		t.Fatal("bad CA PEM")
	}
	return Config{
		Endpoint: s.Endpoint(), GuildID: testGuild, ChannelID: testChannel, UserID: user,
		SessionID: sess.SessionID, Token: sess.Token,
		TLSConfig:     &tls.Config{RootCAs: pool},
		Logger:        testLogger(t),
		Metrics:       m,
		ResumeBackoff: 20 * time.Millisecond,
	}
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func dial(t testing.TB, cfg Config) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newMetrics() *Metrics { return NewMetrics(prometheus.NewRegistry()) }

func value(c prometheus.Collector) float64 {
	ch := make(chan prometheus.Metric, 16)
	c.Collect(ch)
	close(ch)
	var sum float64
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			panic(err)
		}
		switch {
		case d.Counter != nil:
			sum += d.Counter.GetValue()
		case d.Gauge != nil:
			sum += d.Gauge.GetValue()
		}
	}
	return sum
}

// lateOver returns how many packets m's lateness histogram counted later
// than le seconds after their slot (le: one of its bucket bounds).
func lateOver(m *Metrics, le float64) float64 {
	var d dto.Metric
	if err := m.sendLateness.Write(&d); err != nil {
		panic(err)
	}
	h := d.GetHistogram()
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == le {
			return float64(h.GetSampleCount() - b.GetCumulativeCount())
		}
	}
	panic(fmt.Sprintf("no bucket le=%v", le))
}

func counterOf(v *prometheus.CounterVec, label string) float64 {
	return value(v.WithLabelValues(label))
}

// sine returns n 20 ms frames of 48 kHz stereo PCM.
func sine(frames int, hz float64) []int16 {
	pcm := make([]int16, frames*960*2)
	for i := range frames * 960 {
		v := int16(8000 * math.Sin(2*math.Pi*hz*float64(i)/48000))
		pcm[2*i], pcm[2*i+1] = v, v
	}
	return pcm
}

func opusFrames(t testing.TB, frames int) [][]byte {
	t.Helper()
	f, err := voicesim.EncodePCM(sine(frames, 440))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a failure guard, not a timing requirement
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// nextStream waits for the stream of user.
func nextStream(t testing.TB, c *Conn, user string) *Stream {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case s, ok := <-c.Streams():
			if !ok {
				t.Fatalf("streams closed: %v", c.Err())
			}
			if s.UserID == user {
				return s
			}
		case <-timeout:
			t.Fatalf("no stream for %s", user)
		}
	}
}
