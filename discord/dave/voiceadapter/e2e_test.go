package voiceadapter

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/extsender"
	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	guild   = "1100000000000000001"
	channel = "1100000000000000003"
)

// dialDAVE connects a banter voice connection with a DAVE session to s.
func dialDAVE(t *testing.T, s *voicesim.Server, user string) (*voice.Conn, *dave.Session) {
	t.Helper()
	sess := voicesim.Session{GuildID: guild, ChannelID: channel, UserID: user, SessionID: "s-" + user, Token: "t-" + user}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM())
	uid, _ := strconv.ParseUint(user, 10, 64)
	cid, _ := strconv.ParseUint(channel, 10, 64)
	ds := dave.NewSession(dave.Config{UserID: uid, ChannelID: cid})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := voice.Dial(ctx, voice.Config{
		Endpoint: s.Endpoint(), GuildID: guild, ChannelID: channel, UserID: user,
		SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool},
		E2EE: New(ds), Metrics: voice.NewMetrics(prometheus.NewRegistry()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ds
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a failure guard, generous for a loaded machine
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEndToEndOverVoicesim runs DAVE through the real transport: two
// banter voice connections (voice WS v8 over TLS, UDP with transport
// AEAD) on the Discord voice simulator, whose DAVE server role is played
// here with extsender through the simulator's binary hooks. The call is
// upgraded from protocol 0 (op 24, proposals, commit, welcome, op 22),
// then audio flows both ways end-to-end encrypted: a simulator member
// in the channel hears only DAVE frames.
func TestEndToEndOverVoicesim(t *testing.T) {
	binary := make(chan voicesim.BinaryMessage, 16)
	s := voicetest.Serve(t, voicesim.WithOnBinary(func(m voicesim.BinaryMessage) { binary <- m }))
	const botID, peerID = "1100000000000000100", "1100000000000000200"
	bot, botDAVE := dialDAVE(t, s, botID)
	peer, peerDAVE := dialDAVE(t, s, peerID)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listener, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: guild, ChannelID: channel, UserID: "1100000000000000300", FrameInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Leave()

	cid, _ := strconv.ParseUint(channel, 10, 64)
	x, err := extsender.New(cid)
	if err != nil {
		t.Fatal(err)
	}
	users := []string{botID, peerID}
	recv := func(op wire.Opcode) map[string][]byte {
		got := map[string][]byte{}
		for len(got) < len(users) {
			select {
			case m := <-binary:
				if int(m.Op) != int(op) {
					t.Fatalf("op %d from %s, want %s", m.Op, m.UserID, op)
				}
				got[m.UserID] = m.Payload
			case <-ctx.Done():
				t.Fatalf("waiting for %s: got %d", op, len(got))
			}
		}
		return got
	}
	for _, u := range users {
		if err := s.SendBinary(guild, u, voicesim.Op(wire.OpMLSExternalSender), x.Package()); err != nil {
			t.Fatal(err)
		}
		if err := s.SendJSON(guild, u, voicesim.Op(wire.OpPrepareEpoch), wire.PrepareEpochEvent{Epoch: 1, ProtocolVersion: 1}); err != nil {
			t.Fatal(err)
		}
	}
	kps := recv(wire.OpMLSKeyPackage)
	for i, u := range users {
		other := users[1-i]
		p, _, err := x.Propose([][]byte{kps[other]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SendBinary(guild, u, voicesim.Op(wire.OpMLSProposals), p); err != nil {
			t.Fatal(err)
		}
	}
	commits := recv(wire.OpMLSCommitWelcome)
	ann, err := x.AcceptCommit(mustUID(botID), commits[botID])
	if err != nil {
		t.Fatal(err)
	}
	send := func(to []uint64, op wire.Opcode, payload []byte) {
		for _, u := range to {
			if err := s.SendBinary(guild, strconv.FormatUint(u, 10), voicesim.Op(op), payload); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(ann.CommitTo, wire.OpMLSAnnounceCommitTransition, ann.Commit)
	send(ann.WelcomeTo, wire.OpMLSWelcome, ann.Welcome)
	waitFor(t, "both members in epoch 1", func() bool { return botDAVE.Epoch() == 1 && peerDAVE.Epoch() == 1 })
	if !bytes.Equal(botDAVE.EpochAuthenticator(), peerDAVE.EpochAuthenticator()) {
		t.Fatal("epoch authenticators differ")
	}
	for _, u := range users {
		if err := s.SendJSON(guild, u, voicesim.Op(wire.OpExecuteTransition), wire.ExecuteTransitionEvent{TransitionID: ann.TransitionID}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "protocol 1", func() bool { return botDAVE.ProtocolVersion() == 1 && peerDAVE.ProtocolVersion() == 1 })
	waitFor(t, "sender keys", func() bool {
		_, e1 := botDAVE.EncryptOpus(nil, []byte{1})
		_, e2 := peerDAVE.EncryptOpus(nil, []byte{1})
		return e1 == nil && e2 == nil
	})

	// Audio both ways.
	for _, dir := range []struct {
		from, to *voice.Conn
		fromID   string
	}{{bot, peer, botID}, {peer, bot, peerID}} {
		frames := make([][]byte, 10)
		for i := range frames {
			frames[i] = []byte(fmt.Sprintf("opus frame %d from %s", i, dir.fromID))
		}
		for _, f := range frames { // the stream buffers them (depth 50)
			if err := dir.from.SendOpus(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		st := nextStream(t, dir.to, dir.fromID)
		for i := range frames {
			select {
			case f := <-st.Frames():
				if !bytes.Equal(f.Opus, frames[i]) {
					t.Fatalf("frame %d: %q, want %q", i, f.Opus, frames[i])
				}
			case <-ctx.Done():
				t.Fatalf("received %d/%d frames from %s", i, len(frames), dir.fromID)
			}
		}
		if err := listener.WaitHeard(ctx, dir.fromID, len(frames)); err != nil {
			t.Fatal(err)
		}
		for _, h := range listener.Heard(dir.fromID)[:len(frames)] {
			if bytes.Contains(h, []byte("opus frame")) || !bytes.HasSuffix(h, []byte{0xFA, 0xFA}) {
				t.Fatalf("the channel heard a non-DAVE frame %q", h)
			}
		}
	}
}

func mustUID(s string) uint64 {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func nextStream(t *testing.T, c *voice.Conn, user string) *voice.Stream {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case st, ok := <-c.Streams():
			if !ok {
				t.Fatalf("streams closed: %v", c.Err())
			}
			if st.UserID == user {
				return st
			}
		case <-timeout:
			t.Fatalf("no stream for %s", user)
		}
	}
}

// dialBot connects a banter voice connection whose DAVE session has the
// given config (user and channel filled in) to s.
func dialBot(t *testing.T, s *voicesim.Server, user string, cfg dave.Config) (*voice.Conn, *dave.Session) {
	t.Helper()
	sess := voicesim.Session{GuildID: guild, ChannelID: channel, UserID: user, SessionID: "s-" + user, Token: "t-" + user}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM())
	cfg.UserID, cfg.ChannelID = mustUID(user), mustUID(channel)
	ds := dave.NewSession(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := voice.Dial(ctx, voice.Config{
		Endpoint: s.Endpoint(), GuildID: guild, ChannelID: channel, UserID: user,
		SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool},
		E2EE: New(ds), Metrics: voice.NewMetrics(prometheus.NewRegistry()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ds
}

// TestStuckTransitionRecovers runs the voice simulator's DAVE server role
// with a fault that loses one message to the bot, so that the bot's first
// DAVE transition never completes, and checks the bot comes out of it on
// its own and is heard, end-to-end encrypted, by a member of the call:
//
//   - op 22 withheld: the bot said ready (op 23) for the commit that made
//     the group and never gets the order to switch keys. Without a
//     timeout it has no sender key for ever (every frame ErrNotReady);
//     after TransitionTimeout it executes the transition itself.
//   - op 30 withheld: the bot's key package is answered by a Welcome it
//     never gets, while the gateway counts it in the group. After
//     JoinTimeout it reports op 31 and sends a new key package; the
//     gateway removes its stale leaf and adds it again.
func TestStuckTransitionRecovers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		op      voicesim.Op
		logLine string
	}{
		{"execute withheld", voicesim.OpDAVEExecuteTransition, `"msg":"dave_transition_timeout"`},
		{"welcome withheld", voicesim.OpMLSWelcome, `"msg":"dave_join_timeout"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := voicetest.Serve(t, voicesim.WithDAVE(), voicesim.WithDAVETimeout(500*time.Millisecond))
			const botID, aliceID = "1100000000000000100", "1100000000000000200"
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			alice, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: guild, ChannelID: channel, UserID: aliceID})
			if err != nil {
				t.Fatal(err)
			}
			defer alice.Leave()
			s.WithholdDAVE(guild, channel, botID, tc.op, 1)
			logs := &logbuf.Buffer{}
			reg := prometheus.NewRegistry()
			bot, botDAVE := dialBot(t, s, botID, dave.Config{
				TransitionTimeout: 300 * time.Millisecond, JoinTimeout: time.Second,
				Logger: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: dave.NewMetrics(reg),
			})
			// The bot speaks until alice has heard it: frames it cannot
			// encrypt yet are dropped (ErrNotReady), as a reply's would be.
			opus := []byte("opus frame from the bot")
			for n := 0; alice.Stats().Frames < 10; n++ {
				err := bot.SendOpus(ctx, opus)
				if ctx.Err() != nil {
					t.Fatalf("alice heard %d frames after %d sent; DAVE %+v; bot epoch %d version %d\n%s",
						alice.Stats().Frames, n, s.DAVE(guild, channel), botDAVE.Epoch(), botDAVE.ProtocolVersion(), logs.String())
				}
				if err != nil && !errors.Is(err, dave.ErrNotReady) {
					t.Fatalf("send: %v", err)
				}
			}
			if st := s.DAVE(guild, channel).Stats; st.Withheld != 1 {
				t.Errorf("withheld %d messages, want 1", st.Withheld)
			}
			if !strings.Contains(logs.String(), tc.logLine) {
				t.Errorf("no %s in the bot's log:\n%s", tc.logLine, logs.String())
			}
			if n := counter(t, reg, "banter_dave_timeouts_total"); n != 1 {
				t.Errorf("banter_dave_timeouts_total = %v, want 1", n)
			}
			if st := alice.Stats(); st.DAVEDecryptFailures != 0 {
				t.Errorf("alice failed to decrypt %d frames", st.DAVEDecryptFailures)
			}
			for _, h := range alice.Heard(botID) {
				if !bytes.Equal(h, opus) {
					t.Fatalf("alice heard %q", h)
				}
			}
			if got := s.DAVE(guild, channel).Members; len(got) != 2 {
				t.Errorf("group members %v, want the bot and alice", got)
			}
		})
	}
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
