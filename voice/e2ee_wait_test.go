package voice_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/voiceadapter"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	"github.com/banterbot/banter/voice"
)

// TestReplyWithoutE2EEKeyEndsOnce: the bot's DAVE session never gets a sender key (the
// voice server's op 22 Execute Transition for the bot is lost, and the bot's own transition
// timeout is off), and a reply of two seconds is spoken into it. Its first frame waits for a
// key, in vain; then the reply ends with an error that says so, counted once. Before, each
// frame of the reply waited in turn (about 10 s a frame): the reply's WritePCM would run into
// the test's deadline instead.
func TestReplyWithoutE2EEKeyEndsOnce(t *testing.T) {
	t.Parallel()
	const guild, channel = "1100000000000000001", "1100000000000000003"
	const botID, aliceID = "1100000000000000100", "1100000000000000200"
	s := voicetest.Serve(t, voicesim.WithDAVE())
	ctx, cancel := context.WithTimeout(context.Background(), 2*guard)
	defer cancel()
	alice, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: guild, ChannelID: channel, UserID: aliceID})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Leave()
	s.WithholdDAVE(guild, channel, botID, voicesim.OpDAVEExecuteTransition, 1)

	sess := voicesim.Session{GuildID: guild, ChannelID: channel, UserID: botID, SessionID: "s-bot", Token: "t-bot"}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM())
	uid, _ := strconv.ParseUint(botID, 10, 64)
	cid, _ := strconv.ParseUint(channel, 10, 64)
	ds := dave.NewSession(dave.Config{UserID: uid, ChannelID: cid, TransitionTimeout: -1})
	conn, err := dvoice.Dial(ctx, dvoice.Config{
		Endpoint: s.Endpoint(), GuildID: guild, ChannelID: channel, UserID: botID,
		SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool},
		E2EE: voiceadapter.New(ds), Metrics: dvoice.NewMetrics(prometheus.NewRegistry()),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for s.DAVE(guild, channel).Stats.Withheld == 0 { // the bot's op 22 is lost: no key for ever
		select {
		case <-ctx.Done():
			t.Fatalf("op 22 never withheld: %+v", s.DAVE(guild, channel))
		case <-time.After(10 * time.Millisecond):
		}
	}

	reg := prometheus.NewRegistry()
	pb, err := voice.NewPlayback(conn, pcm.Mono24k(), voice.NewMetrics(reg), nil)
	if err != nil {
		t.Fatal(err)
	}
	pb.Begin(nil)
	reply := make([]byte, 2*24000*2+100) // two seconds of 24 kHz mono, and part of a frame
	err = pb.WritePCM(ctx, reply)
	if !errors.Is(err, dave.ErrNotReady) || ctx.Err() != nil {
		t.Fatalf("reply into a DAVE session without a key: %v (context: %v), want it to end for want of a key", err, ctx.Err())
	}
	if err := pb.End(ctx, true); (err != nil && !errors.Is(err, dave.ErrNotReady)) || ctx.Err() != nil {
		t.Fatalf("End after the reply gave up: %v (context: %v)", err, ctx.Err())
	}
	if st := alice.Stats(); pb.Played() != 0 || st.Frames != st.Silence {
		t.Errorf("played %v, alice heard %d frames besides silence: want nothing", pb.Played(), st.Frames-st.Silence)
	}
	if n := metricValue(t, reg, "banter_voice_frames_unencrypted_dropped_total", ""); n != 1 {
		t.Errorf("frames dropped for want of a key = %v, want 1 (the reply's first)", n)
	}
}
