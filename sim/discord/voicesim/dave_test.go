package voicesim

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/voiceadapter"
	"github.com/banterbot/banter/discord/voice"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	daveGuild   = "1200000000000000001"
	daveChannel = "1200000000000000002"
	daveBot     = "1200000000000000100"
)

// dialBot connects banter's production voice client (discord/voice with a
// dave.Session through voiceadapter) to s.
func dialBot(t *testing.T, s *Server, user string) (*botConn, *dave.Session) {
	t.Helper()
	sess := Session{GuildID: daveGuild, ChannelID: daveChannel, UserID: user, SessionID: "s-" + user, Token: "t-" + user}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM())
	uid, _ := strconv.ParseUint(user, 10, 64)
	cid, _ := strconv.ParseUint(daveChannel, 10, 64)
	ds := dave.NewSession(dave.Config{UserID: uid, ChannelID: cid})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := voice.Dial(ctx, voice.Config{
		Endpoint: s.Endpoint(), GuildID: daveGuild, ChannelID: daveChannel, UserID: user,
		SessionID: sess.SessionID, Token: sess.Token, TLSConfig: &tls.Config{RootCAs: pool},
		E2EE: voiceadapter.New(ds), Metrics: voice.NewMetrics(prometheus.NewRegistry()),
		ResumeBackoff: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &botConn{Conn: c, streams: map[string]*voice.Stream{}}, ds
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settled waits until the channel's group holds exactly users at an epoch
// of at least minEpoch, with no proposal or transition outstanding, and
// every listed session has executed into that epoch at protocol 1 with
// the same epoch authenticator.
func settled(t *testing.T, s *Server, minEpoch uint64, users []string, sessions ...*dave.Session) DAVEState {
	t.Helper()
	want := slices.Clone(users)
	slices.Sort(want)
	var st DAVEState
	defer func() {
		if t.Failed() {
			t.Logf("server state %+v", st)
			for i, ds := range sessions {
				t.Logf("session %d: epoch %d, version %d, %v", i, ds.Epoch(), ds.ProtocolVersion(), ds.Status())
			}
		}
	}()
	eventually(t, fmt.Sprintf("group %v at epoch >= %d", want, minEpoch), func() bool {
		st = s.DAVE(daveGuild, daveChannel)
		got := slices.Clone(st.Members)
		slices.Sort(got)
		if st.Busy || st.Version != 1 || st.Epoch < minEpoch || !slices.Equal(got, want) {
			return false
		}
		for _, ds := range sessions {
			if ds.Epoch() != st.Epoch || ds.ProtocolVersion() != 1 {
				return false
			}
		}
		return true
	})
	auth := sessions[0].EpochAuthenticator()
	for i, ds := range sessions[1:] {
		if a := ds.EpochAuthenticator(); !bytes.Equal(a, auth) {
			t.Fatalf("epoch %d: authenticator of session %d %x != %x", st.Epoch, i+1, a, auth)
		}
	}
	return st
}

// botHears has the member play frames and checks the bot receives them
// byte-exact (end-to-end decrypted by its dave.Session).
func botHears(t *testing.T, ctx context.Context, bot *botConn, m *Member, frames [][]byte) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- m.PlayOpus(ctx, frames) }()
	st := streamOf(t, bot, m.UserID())
	for i := 0; i < len(frames); {
		select {
		case f := <-st.Frames():
			if isSilence(f.Opus) {
				continue // the end of an earlier talk spurt
			}
			i++
			if !bytes.Equal(f.Opus, frames[i-1]) {
				t.Fatalf("bot got frame %d from %s: %x, want %x", i-1, m.UserID(), f.Opus, frames[i-1])
			}
		case <-ctx.Done():
			t.Fatalf("bot received %d/%d frames from %s", i, len(frames), m.UserID())
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := m.Stats().DAVENotReady; n != 0 {
		t.Fatalf("member %s dropped %d frames for want of a sender key", m.UserID(), n)
	}
}

// memberHears has the bot send frames and checks each member hears them.
func memberHears(t *testing.T, ctx context.Context, bot *botConn, frames [][]byte, ms ...*Member) {
	t.Helper()
	before := make([]int, len(ms))
	for i, m := range ms {
		before[i] = len(m.Heard(daveBot))
	}
	for _, f := range frames {
		if err := bot.SendOpus(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := bot.StopSpeaking(ctx); err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if err := m.WaitHeard(ctx, daveBot, before[i]+len(frames)); err != nil {
			t.Fatal(err)
		}
		got := m.Heard(daveBot)[before[i]:]
		for j := range frames {
			if !bytes.Equal(got[j], frames[j]) {
				t.Fatalf("member %s heard frame %d %x, want %x", m.UserID(), j, got[j], frames[j])
			}
		}
	}
}

// botConn is banter's voice connection and the streams it announced.
type botConn struct {
	*voice.Conn
	streams map[string]*voice.Stream
}

// streamOf returns the bot's current stream for user.
func streamOf(t *testing.T, c *botConn, user string) *voice.Stream {
	t.Helper()
	if st := c.streams[user]; st != nil {
		select {
		case <-st.Done():
		default:
			return st
		}
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case st, ok := <-c.Streams():
			if !ok {
				t.Fatalf("streams closed: %v", c.Err())
			}
			c.streams[st.UserID] = st
			if st.UserID == user {
				return st
			}
		case <-timeout:
			t.Fatalf("no stream for %s", user)
		}
	}
}

func opusFrames(t *testing.T, freq float64, n int) [][]byte {
	t.Helper()
	frames, err := EncodePCM(sine(freq, n))
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// TestDAVECall runs a DAVE call end to end over the real wire: banter's
// voice client with a dave.Session, the simulator as external sender,
// and simulated members that are DAVE participants. Audio goes both ways
// through the forwarding unit, which never holds a media key; members join
// and leave mid-call (once while the bot's socket is down and resuming);
// a corrupted Welcome is recovered with op 31; a
// member without DAVE downgrades the call to protocol 0 and its leaving
// upgrades it again. After every transition all epoch authenticators are
// equal.
func TestDAVECall(t *testing.T) {
	s := serve(t, WithDAVE())
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	bot, botDAVE := dialBot(t, s, daveBot)
	join := func(user string, o MemberOptions) *Member {
		o.GuildID, o.ChannelID, o.UserID, o.FrameInterval = daveGuild, daveChannel, user, 2*time.Millisecond
		m, err := s.JoinMember(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Leave)
		return m
	}
	const a, b, c, d = "1200000000000000201", "1200000000000000202", "1200000000000000203", "1200000000000000204"
	eventually(t, "bot's key package", func() bool { return s.DAVE(daveGuild, daveChannel).Stats.KeyPackages == 1 })

	// Group creation: bot and A.
	ma := join(a, MemberOptions{})
	settled(t, s, 1, []string{daveBot, a}, botDAVE, ma.DAVE())
	botHears(t, ctx, bot, ma, opusFrames(t, 440, 10))
	memberHears(t, ctx, bot, opusFrames(t, 660, 10), ma)

	// B joins mid-call (an Add commit, B by Welcome), then leaves (a
	// Remove commit with a path).
	mb := join(b, MemberOptions{})
	st := settled(t, s, 2, []string{daveBot, a, b}, botDAVE, ma.DAVE(), mb.DAVE())
	botHears(t, ctx, bot, mb, opusFrames(t, 550, 10))
	memberHears(t, ctx, bot, opusFrames(t, 330, 10), ma, mb)
	mb.Leave()
	st = settled(t, s, st.Epoch+1, []string{daveBot, a}, botDAVE, ma.DAVE())
	botHears(t, ctx, bot, ma, opusFrames(t, 770, 10))

	// The bot's socket drops while B joins again: the proposals and the
	// commit wait in the resume buffer and the bot catches up after op 7.
	if err := s.DropVoice(daveBot); err != nil {
		t.Fatal(err)
	}
	mb = join(b, MemberOptions{})
	st = settled(t, s, st.Epoch+1, []string{daveBot, a, b}, botDAVE, ma.DAVE(), mb.DAVE())
	if st.Stats.Timeouts != 0 {
		t.Fatalf("transition timed out while the bot resumed: %+v", st.Stats)
	}
	botHears(t, ctx, bot, mb, opusFrames(t, 990, 10))
	mb.Leave()
	st = settled(t, s, st.Epoch+1, []string{daveBot, a}, botDAVE, ma.DAVE())

	// C's Welcome is corrupted: C answers op 31 with a new key package,
	// the server removes its leaf and re-adds it.
	s.CorruptNextWelcome(daveGuild, daveChannel, c)
	mc := join(c, MemberOptions{})
	st = settled(t, s, st.Epoch+2, []string{daveBot, a, c}, botDAVE, ma.DAVE(), mc.DAVE())
	if st.Stats.InvalidReports != 1 {
		t.Fatalf("op 31 reports %d, want 1", st.Stats.InvalidReports)
	}
	botHears(t, ctx, bot, mc, opusFrames(t, 880, 10))
	memberHears(t, ctx, bot, opusFrames(t, 220, 10), ma, mc)

	// D has no DAVE: the call goes to protocol 0 and D hears plain Opus.
	md := join(d, MemberOptions{NoDAVE: true})
	eventually(t, "downgrade", func() bool {
		st := s.DAVE(daveGuild, daveChannel)
		return st.Version == 0 && !st.Busy && botDAVE.ProtocolVersion() == 0 && ma.DAVE().ProtocolVersion() == 0 && mc.DAVE().ProtocolVersion() == 0
	})
	memberHears(t, ctx, bot, opusFrames(t, 500, 10), md, ma)
	botHears(t, ctx, bot, md, opusFrames(t, 600, 10))

	// D leaves: a new group at protocol 1 (op 24 epoch 1).
	md.Leave()
	st = settled(t, s, 1, []string{daveBot, a, c}, botDAVE, ma.DAVE(), mc.DAVE())
	if st.Stats.Downgrades != 1 || st.Stats.Upgrades != 1 {
		t.Fatalf("downgrades %d upgrades %d, want 1 and 1", st.Stats.Downgrades, st.Stats.Upgrades)
	}
	botHears(t, ctx, bot, ma, opusFrames(t, 450, 10))
	memberHears(t, ctx, bot, opusFrames(t, 350, 10), ma, mc)
	for _, m := range []*Member{ma, mc} {
		if n := m.Stats().DAVEDecryptFailures; n != 0 {
			t.Errorf("member %s: %d DAVE decrypt failures", m.UserID(), n)
		}
	}
}

// TestDAVEChannelsIndependent: each voice channel has its own external
// sender and group; members in two channels of a guild form two groups
// and hear only their own channel, end-to-end decrypted.
func TestDAVEChannelsIndependent(t *testing.T) {
	s := serve(t, WithDAVE())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	channels := []string{"1200000000000000701", "1200000000000000702"}
	ms := map[string][]*Member{}
	for ci, ch := range channels {
		for i := range 2 {
			u := strconv.Itoa(1200000000000000800 + 10*ci + i)
			m, err := s.JoinMember(ctx, MemberOptions{GuildID: daveGuild, ChannelID: ch, UserID: u, FrameInterval: 2 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Leave)
			ms[ch] = append(ms[ch], m)
		}
	}
	var auths [][]byte
	for _, ch := range channels {
		eventually(t, "group in "+ch, func() bool {
			st := s.DAVE(daveGuild, ch)
			return st.Established && !st.Busy && len(st.Members) == 2
		})
		a, b := ms[ch][0], ms[ch][1]
		if !bytes.Equal(a.DAVE().EpochAuthenticator(), b.DAVE().EpochAuthenticator()) {
			t.Fatalf("%s: epoch authenticators differ", ch)
		}
		auths = append(auths, a.DAVE().EpochAuthenticator())
		frames := opusFrames(t, 440, 10)
		if err := a.PlayOpus(ctx, frames); err != nil {
			t.Fatal(err)
		}
		if err := b.WaitHeard(ctx, a.UserID(), len(frames)); err != nil {
			t.Fatal(err)
		}
		for i, f := range b.Heard(a.UserID())[:len(frames)] {
			if !bytes.Equal(f, frames[i]) {
				t.Fatalf("%s: frame %d differs", ch, i)
			}
		}
	}
	if bytes.Equal(auths[0], auths[1]) {
		t.Fatal("the two channels share a group")
	}
	for _, m := range ms[channels[1]] {
		if h := m.Heard(ms[channels[0]][0].UserID()); len(h) != 0 {
			t.Fatalf("%s heard %d frames from the other channel", m.UserID(), len(h))
		}
	}
}

// TestDAVEWithholdFault: WithholdDAVE loses the next op 22 to a member, so
// its transition never completes: the server role went on (the group holds
// both, nothing outstanding), the other member switched keys, and the
// member has no sender key (an in-process member has no timeout: its
// PlayOpus frames are all dropped as not ready, and nobody hears them). A
// later transition reaches it again.
func TestDAVEWithholdFault(t *testing.T) {
	s := serve(t, WithDAVE(), WithDAVETimeout(500*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const a, b, c = "1200000000000000201", "1200000000000000202", "1200000000000000203"
	join := func(u string) *Member {
		m, err := s.JoinMember(ctx, MemberOptions{GuildID: daveGuild, ChannelID: daveChannel, UserID: u, FrameInterval: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Leave)
		return m
	}
	ma := join(a)
	s.WithholdDAVE(daveGuild, daveChannel, b, OpDAVEExecuteTransition, 1)
	mb := join(b)
	eventually(t, "the group of a and b, nothing outstanding", func() bool {
		st := s.DAVE(daveGuild, daveChannel)
		return len(st.Members) == 2 && !st.Busy && st.Stats.Transitions >= 1
	})
	if st := s.DAVE(daveGuild, daveChannel).Stats; st.Withheld != 1 {
		t.Fatalf("withheld %d, want 1", st.Withheld)
	}
	frames := opusFrames(t, 440, 5)
	if err := mb.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	if n := mb.Stats().DAVENotReady; n != uint64(len(frames)) {
		t.Fatalf("b dropped %d of %d frames as not ready", n, len(frames))
	}
	if _, err := mb.DAVE().EncryptOpus(nil, []byte{1}); err == nil {
		t.Fatal("b has a sender key without op 22")
	}
	// c joins: the next transition's op 22 reaches b.
	join(c)
	eventually(t, "b's sender key after the next transition", func() bool {
		_, err := mb.DAVE().EncryptOpus(nil, []byte{1})
		return err == nil
	})
	before := len(ma.Heard(b))
	if err := mb.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	if err := ma.WaitHeard(ctx, b, before+len(frames)); err != nil {
		t.Fatal(err)
	}
}
