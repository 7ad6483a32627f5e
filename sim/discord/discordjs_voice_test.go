package discordsim

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// lockedBuffer is a bytes.Buffer safe for the exec copier and the test.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func sine(freq float64, frames int) []int16 {
	pcm := make([]int16, frames*960*2)
	for i := 0; i < len(pcm)/2; i++ {
		v := int16(10000 * math.Sin(2*math.Pi*freq*float64(i)/48000))
		pcm[2*i], pcm[2*i+1] = v, v
	}
	return pcm
}

// TestDiscordJSVoiceThroughGateway has discord.js join voice through its
// own guild adapter over the simulated main gateway (op 4 →
// VOICE_STATE_UPDATE → VOICE_SERVER_UPDATE), connect to voicesim and
// exchange audio with a simulated member both ways, then leave.
func TestDiscordJSVoiceThroughGateway(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the discord.js fidelity test needs Node 20+")
	}
	interop, err := filepath.Abs("../../interop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@discordjs", "voice")); err != nil {
		t.Fatalf("@discordjs/voice is not installed: run `npm ci` in %s (make test does): %v", interop, err)
	}
	vs := voicesim.Serve(t)
	w := newWorld(t, WithVoiceSim(vs))
	ctx := testCtx(t)
	member, err := w.sim.JoinVoiceMember(ctx, w.alice, w.voice, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "discordjs", "voice.mjs"))
	cmd.Env = append(os.Environ(),
		"SIM_API="+w.sim.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.sim.Token(),
		"SIM_GUILD="+string(w.guild),
		"SIM_VOICE_CHANNEL="+string(w.voice),
		"SIM_PEER="+string(w.alice),
		"NODE_EXTRA_CA_CERTS="+vs.CAFile(),
	)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type event struct {
		Event string `json:"event"`
		Hex   string `json:"hex"`
	}
	events := make(chan event, 1024)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				events <- e
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	exited := false
	defer func() {
		if !exited {
			stdin.Close()
			_ = cmd.Process.Kill()
			<-readDone
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("node stderr:\n%s", stderr.String())
		}
	}()
	wait := func(what string, pred func(event) bool) {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("node exited while waiting for %s", what)
				}
				if pred(e) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
		}
	}
	wait("ready", func(e event) bool { return e.Event == "ready" })
	st, ok := w.sim.VoiceStateOf(w.guild, w.sim.BotID())
	if !ok || st.Channel != w.voice || st.SelfDeaf {
		t.Fatalf("bot voice state %+v %v", st, ok)
	}

	frames, err := voicesim.EncodePCM(sine(660, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := member.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	wait("the member's opus", func(e event) bool {
		if e.Event == "opus" {
			b, _ := hex.DecodeString(e.Hex)
			got = append(got, b)
		}
		return len(got) >= len(frames)
	})
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}

	if _, err := io.WriteString(stdin, "play\n"); err != nil {
		t.Fatal(err)
	}
	if err := member.WaitHeard(ctx, string(w.sim.BotID()), 20); err != nil {
		t.Fatal(err)
	}
	wait("played", func(e event) bool { return e.Event == "played" })

	leaves := w.sim.CountGateway(GatewayVoiceState)
	if _, err := io.WriteString(stdin, "quit\n"); err != nil {
		t.Fatal(err)
	}
	wait("left", func(e event) bool { return e.Event == "left" })
	if _, err := w.sim.WaitGateway(ctx, GatewayVoiceState, leaves+1); err != nil {
		t.Fatal(err)
	}
	for range events {
	}
	<-readDone
	exited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v", err)
	}
	if _, ok := w.sim.VoiceStateOf(w.guild, w.sim.BotID()); ok {
		t.Fatal("the bot is still in voice after destroy")
	}
}
