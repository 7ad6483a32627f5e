package discordsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
)

// nodeLine is one JSON line a script printed: {"event": ..., ...}.
type nodeLine struct {
	Event string `json:"event"`
	raw   []byte
}

// decode unmarshals the whole line into v.
func (l nodeLine) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(l.raw, v); err != nil {
		t.Fatalf("node line %s: %v", l.raw, err)
	}
}

// nodeScript runs one unmodified-client script from interop/discordjs and
// streams its stdout lines. The process is killed when the test ends if it
// has not exited by itself.
type nodeScript struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan nodeLine
	stderr *logbuf.Buffer
	done   chan struct{} // closed when stdout is drained
}

// startNode starts interop/discordjs/<script> with env added. It skips
// the test when node is missing and fails it when the npm peers are.
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
	for _, dep := range []string{"discord.js", "@discordjs/voice"} {
		if _, err := os.Stat(filepath.Join(interop, "node_modules", dep)); err != nil {
			t.Fatalf("%s is not installed: run `npm ci` in %s (make test does): %v", dep, interop, err)
		}
	}
	n := &nodeScript{t: t, lines: make(chan nodeLine, 4096), stderr: &logbuf.Buffer{}, done: make(chan struct{})}
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
		defer close(n.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := nodeLine{raw: bytes.Clone(sc.Bytes())}
			if json.Unmarshal(l.raw, &l) == nil {
				n.lines <- l
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		n.stdin.Close()
		if n.cmd.ProcessState == nil {
			_ = n.cmd.Process.Kill()
			<-n.done
			_ = n.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("node stderr:\n%s", n.stderr.String())
		}
	})
	return n
}

// wait reads lines until match accepts one and returns it; every line read
// is passed to match. It fails the test if the script exits first.
func (n *nodeScript) wait(what string, match func(nodeLine) bool) nodeLine {
	n.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-n.lines:
			if !ok {
				n.t.Fatalf("node exited while waiting for %s", what)
			}
			if match(l) {
				return l
			}
		case <-deadline:
			n.t.Fatalf("waiting for %s from node: timed out", what)
		}
	}
}

// waitContent waits for a line with the event name and, if content is not
// empty, that "content" field.
func (n *nodeScript) waitContent(event, content string) nodeLine {
	n.t.Helper()
	return n.wait(event+" "+content, func(l nodeLine) bool {
		if l.Event != event {
			return false
		}
		if content == "" {
			return true
		}
		var c struct{ Content string }
		_ = json.Unmarshal(l.raw, &c)
		return c.Content == content
	})
}

// send writes one command line to the script's stdin.
func (n *nodeScript) send(cmd string) {
	n.t.Helper()
	if _, err := io.WriteString(n.stdin, cmd+"\n"); err != nil {
		n.t.Fatal(err)
	}
}

// exit waits for the script to end by itself and fails the test unless it
// exited 0.
func (n *nodeScript) exit() {
	n.t.Helper()
	for range n.lines {
	}
	<-n.done
	if err := n.cmd.Wait(); err != nil {
		n.t.Fatalf("node: %v", err)
	}
}
