package discordsim

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// nodeScript runs one interop/discordjs script and streams its JSON
// events. It stops the process when the test ends.
type nodeScript struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan map[string]any
	stderr *lockedBuffer
	done   chan struct{}
}

func startNode(t *testing.T, script string, env ...string) *nodeScript {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the discord.js fidelity tests need Node 20+")
	}
	interop, err := filepath.Abs("../../interop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "discord.js")); err != nil {
		t.Fatalf("discord.js is not installed: run `npm ci` in %s (make test does): %v", interop, err)
	}
	n := &nodeScript{t: t, events: make(chan map[string]any, 1024), stderr: &lockedBuffer{}, done: make(chan struct{})}
	n.cmd = exec.CommandContext(t.Context(), node, filepath.Join(interop, "discordjs", script))
	n.cmd.Env = append(os.Environ(), env...)
	n.cmd.Stderr = n.stderr
	if n.stdin, err = n.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(n.done)
		defer close(n.events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				n.events <- e
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		n.stdin.Close()
		_ = n.cmd.Process.Kill()
		<-n.done
		_ = n.cmd.Wait()
		if t.Failed() {
			t.Logf("node stderr:\n%s", n.stderr.String())
		}
	})
	return n
}

// wait reads events until one named event (with field content, if given)
// arrives.
func (n *nodeScript) wait(event, content string) {
	n.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-n.events:
			if !ok {
				n.t.Fatalf("node exited while waiting for %s %q", event, content)
			}
			if e["event"] == event && (content == "" || e["content"] == content) {
				return
			}
		case <-deadline:
			n.t.Fatalf("no %s %q from node", event, content)
		}
	}
}

// TestDiscordJSGatewayFaults checks that discord.js survives every gateway
// fault the simulator can inject and keeps receiving messages.
func TestDiscordJSGatewayFaults(t *testing.T) {
	w := newWorld(t, WithHeartbeatInterval(400*time.Millisecond))
	ctx := testCtx(t)
	n := startNode(t, "faults.mjs", "SIM_API="+w.sim.APIBaseURL()+"/api", "SIM_TOKEN="+w.sim.Token())
	n.wait("ready", "")
	post := func(content string) {
		t.Helper()
		if _, err := w.sim.Post(ctx, w.alice, w.text, content); err != nil {
			t.Fatal(err)
		}
		n.wait("message", content)
	}
	post("before faults")
	tests := []struct {
		name   string
		fault  func() error
		expect GatewayEventKind // what the client must do next
	}{
		{"op 7 reconnect", w.sim.ForceReconnect, GatewayResumed},
		{"dropped socket", w.sim.DropGateway, GatewayResumed},
		{"missed ACK", func() error { return w.sim.WithholdACKs(1) }, GatewayResumed},
		{"op 9 resumable", func() error { return w.sim.ForceInvalidSession(true) }, GatewayResumed},
		{"op 9 not resumable", func() error { return w.sim.ForceInvalidSession(false) }, GatewayIdentified},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := w.sim.CountGateway(tc.expect)
			if err := tc.fault(); err != nil {
				t.Fatal(err)
			}
			if _, err := w.sim.WaitGateway(ctx, tc.expect, before+1); err != nil {
				t.Fatal(err)
			}
			post("after " + tc.name)
		})
	}
	if _, err := io.WriteString(n.stdin, "quit\n"); err != nil {
		t.Fatal(err)
	}
	n.wait("done", "")
}
