package openaisim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeTurn is a turn as interop/gemini/live.mjs reports it.
type nodeTurn struct {
	Event       string `json:"event"`
	Input       string `json:"input"`
	Output      string `json:"output"`
	Audio       int    `json:"audio"`
	Interrupted bool   `json:"interrupted"`
	Handle      string `json:"handle"`
	TimeLeft    string `json:"timeLeft"`
	Setup       bool   `json:"setupComplete"`
}

// TestGeminiNodeSDK runs Google's npm client, @google/genai's Live API, unmodified, against the
// Gemini face: setup, a spoken turn with transcriptions, an interrupted one, goAway and a
// resumed connection that remembers the first. It skips only when node is missing.
func TestGeminiNodeSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the @google/genai fidelity test needs it")
	}
	interop, err := filepath.Abs("../../interop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@google", "genai")); err != nil {
		t.Fatalf("@google/genai is not installed: run `make interop-deps`: %v", err)
	}
	const answer, long = sdkAnswer, sdkStory
	s := sdkScript(t)
	cmd := exec.CommandContext(t.Context(), node, filepath.Join(interop, "gemini", "live.mjs"))
	cmd.Env = append(os.Environ(), "GEMINI_BASE_URL=http"+strings.TrimPrefix(s.GeminiURL(), "ws"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node stderr:\n%s", stderr.String())
		}
	}()
	var turns []nodeTurn
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var l nodeTurn
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("node line %q: %v", sc.Text(), err)
		}
		switch l.Event {
		case "setup":
			if !l.Setup {
				t.Error("no setupComplete first")
			}
		case "await_goaway":
			if n := s.GeminiGoAway(90 * time.Second); n != 1 {
				t.Fatalf("goAway told %d connections", n)
			}
		case "goaway":
			if l.TimeLeft != "90s" {
				t.Errorf("goAway timeLeft %q", l.TimeLeft)
			}
		case "turn":
			turns = append(turns, l)
		}
	}
	if len(turns) != 3 {
		t.Fatalf("node reported %d turns, want 3: %+v", len(turns), turns)
	}
	if tr := turns[0]; tr.Input != "what is the weather in oslo" || tr.Output != answer || tr.Interrupted || tr.Audio != len(Synthesize(answer, "Kore", 1)) {
		t.Errorf("spoken turn: %+v", tr)
	}
	if tr := turns[1]; !tr.Interrupted || tr.Output == long {
		t.Errorf("interrupted turn: %+v", tr)
	}
	if tr := turns[2]; tr.Output != "You asked about the weather in Oslo." {
		t.Errorf("resumed turn: %+v, want the first question remembered", tr)
	}
}
