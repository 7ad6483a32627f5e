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
	"strings"
	"sync"
	"testing"
	"time"
)

// interopDir is the repository's interop/ directory (npm project pinning
// discord.js, @discordjs/voice, @snazzah/davey, opusscript).
func interopDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "interop"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// ensureNodeModules runs `npm ci` once if interop/node_modules is missing.
func ensureNodeModules(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@discordjs", "voice", "package.json")); err == nil {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("interop/node_modules is missing and npm is not installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

type nodeEvent struct {
	Event   string `json:"event"`
	Status  string `json:"status"`
	User    string `json:"user"`
	Hex     string `json:"hex"`
	Message string `json:"message"`
	Frames  int    `json:"frames"`  // played: tone frames sent
	Encoded int    `json:"encoded"` // played: tone frames encoded
}

// toneFrames is the 1 s tone client.mjs plays, in 20 ms Opus frames.
const toneFrames = 50

// checkPlayed checks a "played" event: djs encoded the whole tone and sent
// every frame of it (client.mjs encodes before playing, so a slow machine
// cannot make djs send silence in a frame's place).
func checkPlayed(t *testing.T, e nodeEvent) {
	t.Helper()
	if e.Encoded != toneFrames || e.Frames != e.Encoded {
		t.Fatalf("djs played %d of %d encoded tone frames, want all %d", e.Frames, e.Encoded, toneFrames)
	}
}

// TestDiscordJSVoiceInterop runs an unmodified @discordjs/voice 0.19.2
// VoiceConnection (interop/voice/client.mjs) against the simulator: it
// connects over wss with the simulator's CA, receives Opus a simulated
// member plays (byte-exact), and plays a tone the member hears and decodes.
func TestDiscordJSVoiceInterop(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the @discordjs/voice fidelity test needs Node 20+")
	}
	dir := interopDir(t)
	ensureNodeModules(t, dir)
	t.Run(ModeAES256GCMRTPSize.String(), func(t *testing.T) {
		runDiscordJSVoice(t, node, dir, ModeAES256GCMRTPSize)
	})
	t.Run(ModeXChaCha20Poly1305RTPSize.String(), func(t *testing.T) {
		// djs encrypts xchacha with the first of these packages it can
		// import; interop/package.json pins none of them yet.
		for _, lib := range []string{"sodium-native", "sodium", "libsodium-wrappers", "@stablelib/xchacha20poly1305", "@noble/ciphers"} {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", lib, "package.json")); err == nil {
				runDiscordJSVoice(t, node, dir, ModeXChaCha20Poly1305RTPSize)
				return
			}
		}
		t.Skip("no XChaCha20 package for @discordjs/voice in interop/node_modules (add e.g. @noble/ciphers to interop/package.json)")
	})
}

// runDiscordJSVoice runs the djs client against a server that offers only
// mode.
func runDiscordJSVoice(t *testing.T, node, dir string, mode Mode) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A short heartbeat interval so djs heartbeats (with seq_ack) during the
	// test; a generous timeout so that a loaded machine does not end the
	// session with 4009.
	s := serve(t, WithHeartbeat(500*time.Millisecond, 30*time.Second), WithModes(mode))
	const (
		bot     = "1100000000000000010"
		peer    = "1100000000000000011"
		channel = "1100000000000000003"
	)
	sess := Session{GuildID: guild, ChannelID: channel, UserID: bot, SessionID: "9f2c0c8e1d", Token: "vtok-8f1e2d"}
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	m, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: channel, UserID: peer})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "voice", "client.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"NODE_EXTRA_CA_CERTS="+s.CAFile(),
		"VOICE_ENDPOINT="+s.Endpoint(),
		"VOICE_TOKEN="+sess.Token,
		"VOICE_SESSION_ID="+sess.SessionID,
		"GUILD_ID="+guild,
		"CHANNEL_ID="+channel,
		"BOT_USER_ID="+bot,
		"PEER_USER_ID="+peer,
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan nodeEvent, 1024)
	stop := make(chan struct{}) // closed when the test stops reading events
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e nodeEvent
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			select {
			case events <- e:
			case <-stop:
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var states []string // connection states seen, for failure reports
	exited := false
	defer func() {
		close(stop)
		if !exited {
			stdin.Close()
			cmd.Process.Kill()
			<-readDone
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("djs states: %v", states)
			t.Logf("server stats %+v; from djs %+v; member %+v", s.Stats(), s.UserStats(bot), m.Stats())
			t.Logf("node stderr:\n%s", tail(stderrOf(&stderr, cmd), 60))
		}
	}()

	wait := func(what string, pred func(nodeEvent) bool) {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("node exited while waiting for %s", what)
				}
				if e.Event == "error" {
					t.Fatalf("node: %s", e.Message)
				}
				if e.Event == "state" {
					states = append(states, e.Status)
				}
				if pred(e) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
		}
	}
	wait("ready", func(e nodeEvent) bool { return e.Event == "ready" })
	// stderr (djs's debug log) is a separate pipe that may lag stdout.
	logHas := func(subs ...string) bool {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			log, all := stderrOf(&stderr, cmd), true
			for _, sub := range subs {
				all = all && strings.Contains(log, sub)
			}
			if all || time.Now().After(deadline) {
				return all
			}
		}
	}
	if !logHas(`"mode":"` + mode.String() + `"`) {
		t.Fatalf("djs did not select %v", mode)
	}

	// Member → djs: real Opus, byte-exact at the receiver.
	frames, err := EncodePCM(sine(880, 25))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	wait("opus from the member", func(e nodeEvent) bool {
		if e.Event == "opus" && e.User == peer {
			b, _ := hex.DecodeString(e.Hex)
			got = append(got, b)
		}
		return len(got) >= len(frames)
	})
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("djs frame %d = %x, want %x", i, got[i], frames[i])
		}
	}

	// djs → member: a 1 s 440 Hz tone encoded by djs (prism-media +
	// opusscript). djs says how many tone frames it sent; the member waits
	// for exactly those (the deadline only guards a failure).
	io.WriteString(stdin, "play\n")
	var played nodeEvent
	wait("played", func(e nodeEvent) bool { played = e; return e.Event == "played" })
	checkPlayed(t, played)
	if err := m.WaitHeard(ctx, bot, played.Frames); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Heard(bot)); n != played.Frames {
		t.Fatalf("member heard %d tone frames from djs, djs sent %d", n, played.Frames)
	}
	pcm := m.HeardPCM(bot)
	if f := dominantFreq(pcm[len(pcm)/4:]); f < 400 || f > 480 {
		t.Fatalf("member heard %.0f Hz from djs, want 440", f)
	}

	st := s.UserStats(bot)
	if st.RTP < uint64(played.Frames) || st.DecryptFailures != 0 || st.Malformed != 0 {
		t.Fatalf("server stats for djs: %+v", st)
	}
	if ms := m.Stats(); ms.DecryptFailures != 0 || ms.Malformed != 0 || ms.DecodeErrors != 0 {
		t.Fatalf("member stats: %+v", ms)
	}

	// Transport drop: djs must resume (op 7 with seq_ack) on a new socket,
	// keep its UDP session and SSRC, and get what it missed replayed.
	ssrc, _ := s.SSRC(guild, bot)
	if err := s.DropVoice(bot); err != nil {
		t.Fatal(err)
	}
	wait("connecting after drop", func(e nodeEvent) bool { return e.Event == "state" && e.Status == "connecting" })
	wait("ready after resume", func(e nodeEvent) bool { return e.Event == "state" && e.Status == "ready" })
	if again, _ := s.SSRC(guild, bot); again != ssrc {
		t.Fatalf("SSRC changed across resume: %d → %d (fresh identify instead of resume?)", ssrc, again)
	}
	if !logHas(`>> {"op":7,`, `<< {"op":9,`) {
		t.Fatalf("djs did not resume with op 7 / op 9")
	}
	got = got[:0]
	if err := m.PlayOpus(ctx, frames[:10]); err != nil {
		t.Fatal(err)
	}
	wait("opus after resume", func(e nodeEvent) bool {
		if e.Event == "opus" && e.User == peer {
			b, _ := hex.DecodeString(e.Hex)
			got = append(got, b)
		}
		return len(got) >= 10
	})
	if !bytes.Equal(got[9], frames[9]) {
		t.Fatalf("after resume frame 9 = %x, want %x", got[9], frames[9])
	}

	// Kicked (Revoke → 4014): djs must not resume and goes to Disconnected.
	s.Revoke(guild, bot)
	wait("disconnected after 4014", func(e nodeEvent) bool { return e.Event == "state" && e.Status == "disconnected" })
	if log := stderrOf(&stderr, cmd); strings.Count(log, `>> {"op":7,`) != 1 {
		t.Fatalf("djs resumed after 4014")
	}

	io.WriteString(stdin, "quit\n")
	wait("bye", func(e nodeEvent) bool { return e.Event == "bye" })
	stdin.Close()
	<-readDone
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node exit: %v", err)
	}
	exited = true
}

func stderrOf(b *bytes.Buffer, cmd *exec.Cmd) string {
	lw := cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return b.String()
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
