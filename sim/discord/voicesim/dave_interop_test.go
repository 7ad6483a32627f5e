package voicesim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// djsProc is a running interop/voice/client.mjs (an unmodified
// @discordjs/voice VoiceConnection) and its event stream.
type djsProc struct {
	t      *testing.T
	ctx    context.Context
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedWriter
	errBuf *bytes.Buffer
	events chan djsEvent
}

type djsEvent struct {
	nodeEvent
	Version int    `json:"version"`
	Epoch   int64  `json:"epoch"`
	Auth    string `json:"auth"`
	Ready   bool   `json:"ready"`
}

// startDJS starts the djs client for sess, subscribed to peer's audio. It
// is stopped and waited for in t.Cleanup.
func startDJS(t *testing.T, ctx context.Context, s *Server, sess Session, peer string) *djsProc {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the @discordjs/voice fidelity test needs Node 20+")
	}
	dir := interopDir(t)
	ensureNodeModules(t, dir)
	cmd := exec.Command(node, filepath.Join(dir, "voice", "client.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"NODE_EXTRA_CA_CERTS="+s.CAFile(),
		"VOICE_ENDPOINT="+s.Endpoint(),
		"VOICE_TOKEN="+sess.Token,
		"VOICE_SESSION_ID="+sess.SessionID,
		"GUILD_ID="+sess.GuildID,
		"CHANNEL_ID="+sess.ChannelID,
		"BOT_USER_ID="+sess.UserID,
		"PEER_USER_ID="+peer,
	)
	p := &djsProc{t: t, ctx: ctx, cmd: cmd, errBuf: &bytes.Buffer{}, events: make(chan djsEvent, 4096)}
	p.stderr = &lockedWriter{w: p.errBuf}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(p.events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e djsEvent
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			select {
			case p.events <- e:
			case <-stop:
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		close(stop)
		io.WriteString(p.stdin, "quit\n")
		p.stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		<-readDone
		if t.Failed() {
			t.Logf("node stderr:\n%s", tail(p.log(), 400))
		}
	})
	return p
}

func (p *djsProc) log() string {
	p.stderr.mu.Lock()
	defer p.stderr.mu.Unlock()
	return p.errBuf.String()
}

func (p *djsProc) send(cmd string) { io.WriteString(p.stdin, cmd+"\n") }

// wait reads events until pred accepts one; node errors fail the test.
func (p *djsProc) wait(what string, pred func(djsEvent) bool) djsEvent {
	p.t.Helper()
	for {
		select {
		case e, ok := <-p.events:
			if !ok {
				p.t.Fatalf("node exited while waiting for %s", what)
			}
			if e.Event == "error" {
				p.t.Fatalf("node: %s", e.Message)
			}
			if pred(e) {
				return e
			}
		case <-p.ctx.Done():
			p.t.Fatalf("waiting for %s: %v", what, p.ctx.Err())
		}
	}
}

// dave asks djs for its DAVE state.
func (p *djsProc) dave() djsEvent {
	p.t.Helper()
	p.send("dave")
	return p.wait("dave state", func(e djsEvent) bool { return e.Event == "dave" })
}

// opus collects n Opus packets djs received from peer (silence skipped).
func (p *djsProc) opus(peer string, n int) [][]byte {
	p.t.Helper()
	var got [][]byte
	p.wait("opus from "+peer, func(e djsEvent) bool {
		if e.Event == "opus" && e.User == peer {
			if b, _ := hex.DecodeString(e.Hex); !isSilence(b) {
				got = append(got, b)
			}
		}
		return len(got) >= n
	})
	return got
}

// TestDiscordJSVoiceDAVEInterop runs an unmodified @discordjs/voice 0.19.2
// client, which does DAVE with @snazzah/davey, against the simulator with
// the DAVE server role on. A simulated member (a banter dave.Session)
// forms the group with it; audio goes both ways end-to-end encrypted;
// a second member joins (djs processes an Add commit) and leaves (a Remove
// commit); the epoch authenticators of djs and the members are equal after
// every transition; a member without DAVE downgrades the call to protocol 0
// (djs plays plain Opus it decodes) and its leaving re-creates the group.
// The op31 run starts with a corrupted Welcome for djs.
func TestDiscordJSVoiceDAVEInterop(t *testing.T) {
	t.Run("join", func(t *testing.T) { runDiscordJSVoiceDAVE(t, false) })
	// djs's first Welcome is corrupted: it answers op 31, re-initializes
	// with a new key package, and the server removes and re-adds it.
	t.Run("op31", func(t *testing.T) { runDiscordJSVoiceDAVE(t, true) })
}

func runDiscordJSVoiceDAVE(t *testing.T, recoverWelcome bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := serve(t, WithDAVE(), WithHeartbeat(500*time.Millisecond, 30*time.Second))
	const (
		bot  = "1300000000000000010"
		peer = "1300000000000000011"
		late = "1300000000000000012"
	)
	sess := Session{GuildID: daveGuild, ChannelID: daveChannel, UserID: bot, SessionID: "d4e5f6", Token: "vtok-dave"}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	join := func(user string, noDAVE ...bool) *Member {
		m, err := s.JoinMember(ctx, MemberOptions{GuildID: daveGuild, ChannelID: daveChannel, UserID: user, NoDAVE: len(noDAVE) > 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Leave)
		return m
	}
	m := join(peer)
	if recoverWelcome {
		s.CorruptNextWelcome(daveGuild, daveChannel, bot)
	}
	djs := startDJS(t, ctx, s, sess, peer)
	djs.wait("ready", func(e djsEvent) bool { return e.Event == "ready" })

	// agree waits for a settled group of users with djs executed into its
	// epoch, then compares epoch authenticators.
	agree := func(step string, users []string, ms ...*Member) {
		t.Helper()
		want := slices.Clone(users)
		slices.Sort(want)
		var st DAVEState
		var d djsEvent
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			st = s.DAVE(daveGuild, daveChannel)
			got := slices.Clone(st.Members)
			slices.Sort(got)
			if !st.Busy && slices.Equal(got, want) {
				if d = djs.dave(); d.Version == 1 && d.Ready && d.Epoch == int64(st.Epoch) {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: server %+v, djs %+v", step, st, d)
			}
		}
		for _, m := range ms {
			if a := hex.EncodeToString(m.DAVE().EpochAuthenticator()); a != d.Auth || a == "" {
				t.Fatalf("%s: epoch %d authenticator of %s %s != djs %s", step, st.Epoch, m.UserID(), a, d.Auth)
			}
		}
	}
	agree("group creation", []string{bot, peer}, m)
	if n := s.DAVE(daveGuild, daveChannel).Stats.InvalidReports; recoverWelcome != (n == 1) {
		t.Fatalf("op 31 reports: %d", n)
	}
	if !strings.Contains(djs.log(), `"dave_protocol_version":1`) {
		t.Fatal("djs was not told dave_protocol_version 1")
	}

	hear := func(step string, frames [][]byte) {
		t.Helper()
		defer func() { // runs on t.Fatal too: what each side had when the frames did not arrive
			if t.Failed() {
				t.Logf("%s: member %+v; DAVE %+v; server stats for the member %+v", step, m.Stats(), s.DAVE(daveGuild, daveChannel), s.UserStats(peer))
			}
		}()
		if err := m.PlayOpus(ctx, frames); err != nil {
			t.Fatal(err)
		}
		got := djs.opus(peer, len(frames))
		for i := range frames {
			if !bytes.Equal(got[i], frames[i]) {
				t.Fatalf("%s: djs frame %d = %x, want %x", step, i, got[i], frames[i])
			}
		}
	}
	// Member → djs: davey decrypts the member's DAVE frames byte-exact.
	hear("member to djs", opusFrames(t, 880, 25))
	// djs → member: the member's dave.Session decrypts davey's frames.
	djs.send("play")
	played := djs.wait("played", func(e djsEvent) bool { return e.Event == "played" })
	checkPlayed(t, played.nodeEvent)
	if err := m.WaitHeard(ctx, bot, played.Frames); err != nil {
		t.Fatal(err)
	}
	pcm := m.HeardPCM(bot)
	if f := dominantFreq(pcm[len(pcm)/4:]); f < 400 || f > 480 {
		t.Fatalf("member heard %.0f Hz from djs, want 440", f)
	}

	// A member joins mid-call and leaves again.
	m2 := join(late)
	agree("join", []string{bot, peer, late}, m, m2)
	hear("after join", opusFrames(t, 660, 10))
	m2.Leave()
	agree("leave", []string{bot, peer}, m)
	hear("after leave", opusFrames(t, 550, 10))

	// A member without DAVE joins: downgrade to protocol 0 (op 21/22);
	// it leaves: a new group at protocol 1 (op 24 epoch 1, op 25).
	m3 := join(late, true)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := s.DAVE(daveGuild, daveChannel)
		if st.Version == 0 && !st.Busy && djs.dave().Version == 0 && m.DAVE().ProtocolVersion() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no downgrade: %+v", st)
		}
	}
	hear("at protocol 0", opusFrames(t, 500, 10))
	djs.send("play")
	played = djs.wait("played", func(e djsEvent) bool { return e.Event == "played" })
	checkPlayed(t, played.nodeEvent)
	if err := m3.WaitHeard(ctx, bot, played.Frames); err != nil {
		t.Fatal(err)
	}
	if pcm := m3.HeardPCM(bot); m3.Stats().DecodeErrors != 0 || len(pcm) == 0 {
		t.Fatalf("the member without DAVE could not decode djs at protocol 0: %+v", m3.Stats())
	} else if f := dominantFreq(pcm[len(pcm)/4:]); f < 400 || f > 480 {
		t.Fatalf("member without DAVE heard %.0f Hz from djs, want 440", f)
	}
	m3.Leave()
	agree("upgrade", []string{bot, peer}, m)
	hear("after upgrade", opusFrames(t, 450, 10))

	if ms := m.Stats(); ms.DAVEDecryptFailures != 0 || ms.DAVENotReady != 0 || ms.DecodeErrors != 0 {
		t.Fatalf("member stats: %+v", ms)
	}
	if st := s.UserStats(bot); st.DecryptFailures != 0 || st.Malformed != 0 {
		t.Fatalf("server stats for djs: %+v", st)
	}
	if st := s.DAVE(daveGuild, daveChannel).Stats; st.Malformed != 0 || st.Timeouts != 0 {
		t.Fatalf("DAVE stats: %+v", st)
	}
}
