package main

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
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
)

// djsMember is a voice channel member played by an unmodified third-party client:
// interop/voice/client.mjs, @discordjs/voice with @snazzah/davey doing DAVE, connected to the
// voice simulator with the grant the Discord simulator gave the member (JoinVoice), as
// discord.js's guild adapter would hand it over.
type djsMember struct {
	t      *testing.T
	ctx    context.Context
	stdin  io.WriteCloser
	events chan djsEvent
	stderr *logbuf.Buffer
	peer   string // the user whose audio the client receives: the bot
	// botSpeaking is the receiver's speaking state of the peer (the bot) as of the last event
	// read.
	botSpeaking bool
}

// djsEvent is one line the client printed (interop/voice/client.mjs lists them).
type djsEvent struct {
	Event    string  `json:"event"`
	User     string  `json:"user"`
	Hex      string  `json:"hex"`
	Speaking bool    `json:"speaking"`
	Frames   int     `json:"frames"`
	Encoded  int     `json:"encoded"`
	T        float64 `json:"t"` // ms on the client's clock (performance.now)
	Message  string  `json:"message"`
	Version  int     `json:"version"`
	Epoch    int64   `json:"epoch"`
	Ready    bool    `json:"ready"`
}

// audio reports whether e is an Opus packet that is not the silence frame.
func (e djsEvent) audio() bool {
	b, _ := hex.DecodeString(e.Hex)
	return e.Event == "opus" && len(b) > 0 && !bytes.Equal(b, []byte{0xf8, 0xff, 0xfe})
}

// interopNode returns node and the interop directory, or skips the test with the reason when
// node or the npm peers (`npm ci` in interop/, which make test runs) are missing.
func interopNode(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the discord.js member needs Node 20+")
	}
	if dir, err = filepath.Abs(filepath.Join("..", "..", "interop")); err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{"@discordjs/voice", "@snazzah/davey", "opusscript"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", dep, "package.json")); err != nil {
			t.Skipf("%s is not installed in interop/node_modules (npm ci in %s; make test does): %v", dep, dir, err)
		}
	}
	return node, dir
}

// startDJSMember connects the client as grant's user, listening to peer, and returns once its
// voice connection is Ready. It is told to quit, and waited for, when the test ends.
func startDJSMember(t *testing.T, ctx context.Context, node, dir, endpoint, caFile string, grant discordsim.VoiceGrant,
	peer discordsim.UserID) *djsMember {
	t.Helper()
	m := &djsMember{t: t, ctx: ctx, events: make(chan djsEvent, 1<<14), stderr: &logbuf.Buffer{}, peer: string(peer)}
	cmd := exec.Command(node, filepath.Join(dir, "voice", "client.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"NODE_EXTRA_CA_CERTS="+caFile,
		"VOICE_ENDPOINT="+endpoint,
		"VOICE_TOKEN="+grant.Token,
		"VOICE_SESSION_ID="+grant.SessionID,
		"GUILD_ID="+string(grant.GuildID),
		"CHANNEL_ID="+string(grant.ChannelID),
		"BOT_USER_ID="+string(grant.UserID),
		"PEER_USER_ID="+string(peer),
	)
	cmd.Stderr = m.stderr
	var err error
	if m.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(m.events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e djsEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				m.events <- e
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		_, _ = io.WriteString(m.stdin, "quit\n")
		m.stdin.Close()
		go func() {
			for range m.events { // unblock the reader; the client exits on quit
			}
		}()
		select {
		case <-read: // the client quit: its stdout is closed
		case <-time.After(10 * time.Second): // a failure guard: a client that does not quit
			_ = cmd.Process.Kill()
			<-read
		}
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node stderr (last 4000 bytes):\n%s", lastBytes(m.stderr.String(), 4000))
		}
	})
	m.wait("the voice connection ready", func(e djsEvent) bool { return e.Event == "ready" })
	return m
}

// send writes one command line to the client.
func (m *djsMember) send(cmd string) {
	m.t.Helper()
	if _, err := io.WriteString(m.stdin, cmd+"\n"); err != nil {
		m.t.Fatalf("node %q: %v", cmd, err)
	}
}

// next returns the next event; a client error or exit fails the test.
func (m *djsMember) next(what string) djsEvent {
	m.t.Helper()
	select {
	case e, ok := <-m.events:
		if !ok {
			m.t.Fatalf("node exited while waiting for %s", what)
		}
		m.track(e)
		return e
	case <-m.ctx.Done():
		m.t.Fatalf("waiting for %s from node: %v", what, m.ctx.Err())
	}
	return djsEvent{}
}

// track fails on a client error and follows the bot's speaking state.
func (m *djsMember) track(e djsEvent) {
	m.t.Helper()
	switch e.Event {
	case "error":
		m.t.Fatalf("node: %s", e.Message)
	case "speaking":
		if e.User == m.peer {
			m.botSpeaking = e.Speaking
		}
	}
}

// wait reads events until pred accepts one and returns it; pred sees every event read.
func (m *djsMember) wait(what string, pred func(djsEvent) bool) djsEvent {
	m.t.Helper()
	for {
		if e := m.next(what); pred(e) {
			return e
		}
	}
}

// quiet reads what the client has printed so far and then, while the bot is still heard
// speaking, until the receiver marks it silent (100 ms without a packet from it).
func (m *djsMember) quiet() {
	m.t.Helper()
	for drained := false; !drained; {
		select {
		case e, ok := <-m.events:
			if !ok {
				m.t.Fatal("node exited")
			}
			m.track(e)
		default:
			drained = true
		}
	}
	for m.botSpeaking {
		m.next("the bot's audio to end")
	}
}

// dave asks the client for its DAVE session's state.
func (m *djsMember) dave() djsEvent {
	m.t.Helper()
	m.send("dave")
	return m.wait("its DAVE state", func(e djsEvent) bool { return e.Event == "dave" })
}

// lastBytes is the end of s, at most n bytes of it.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
