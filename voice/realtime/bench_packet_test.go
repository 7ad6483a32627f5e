package realtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"testing"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// BenchmarkFirstDeltaToPacket measures, through the bot's real voice
// connection on the voice simulator, the time from an item's first audio
// delta reaching the Bridge's player to its first Opus packet written to
// UDP by Conn.SendOpus (Op 5 Speaking, transport encryption, send). Each
// iteration is a new talk spurt (StopSpeaking after it), so the first
// frame goes out at once rather than on the previous spurt's pacing grid.
func BenchmarkFirstDeltaToPacket(b *testing.B) {
	vs := voicetest.Serve(b)
	sess := voicesim.Session{GuildID: testGuild, ChannelID: testChannel, UserID: testBot, SessionID: "s-bench", Token: "t-bench"}
	if err := vs.Authorize(sess); err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(vs.CACertPEM())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	vc, err := dvoice.Dial(ctx, dvoice.Config{Endpoint: vs.Endpoint(), GuildID: testGuild, ChannelID: testChannel,
		UserID: testBot, SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool}})
	if err != nil {
		b.Fatal(err)
	}
	defer vc.Close()
	tk, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var first time.Time
	got := make(chan time.Time, 1)
	sink := func(ctx context.Context, f []byte) error {
		err := vc.SendOpus(ctx, f)
		if first.IsZero() {
			first = time.Now()
			got <- first
		}
		return err
	}
	p := newPlayer(ctx, tk, sink, vc.StopSpeaking, nil, slog.New(slog.DiscardHandler), time.Now)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	// The connection's very first spurt waits one slot for the SSRC
	// mapping: play one before measuring.
	delta := tone(60 * time.Millisecond)
	p.enqueue("warm", delta)
	p.end()
	<-got
	if err := p.waitIdle(ctx); err != nil {
		b.Fatal(err)
	}
	items := []string{"item_a", "item_b"}
	lat := make([]time.Duration, 0, 64)
	i := 0
	for b.Loop() {
		i++
		first = time.Time{}
		start := time.Now()
		p.enqueue(items[i%2], delta)
		at := <-got
		lat = append(lat, at.Sub(start))
		p.end()
		if err := p.waitIdle(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportMedian(b, lat)
}
