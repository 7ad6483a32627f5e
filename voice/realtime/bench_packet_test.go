package realtime

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// BenchmarkFirstDeltaToPacket measures, through the bot's real voice
// connection on the voice simulator, the time from a reply's first audio
// delta reaching the Bridge to its first Opus packet written to UDP by
// Conn.SendOpus (Op 5 Speaking, transport encryption, send), through the
// voice session's Playback. Each iteration is a new talk spurt (the
// Playback's End stops speaking), so the first frame goes out at once
// rather than on the previous spurt's pacing grid.
func BenchmarkFirstDeltaToPacket(b *testing.B) {
	vs := voicetest.Serve(b)
	sess := voicesim.Session{GuildID: testGuild, ChannelID: testChannel, UserID: testBot, SessionID: "s-bench", Token: "t-bench"}
	if err := vs.Authorize(sess); err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(vs.CACertPEM())
	vc, err := dvoice.Dial(b.Context(), dvoice.Config{Endpoint: vs.Endpoint(), GuildID: testGuild, ChannelID: testChannel,
		UserID: testBot, SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool}})
	if err != nil {
		b.Fatal(err)
	}
	defer vc.Close()
	// The connection's very first spurt waits one slot for the SSRC
	// mapping: play one before measuring.
	warm := newReplyPath(b, vc)
	warm.start()
	warm.delta("warm", tone(60*time.Millisecond))
	warm.finish()
	firstDeltaToFrame(b, vc)
}
