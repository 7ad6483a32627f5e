package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
)

func runCLI(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = dispatch(context.Background(), env{
		args: args, stdout: &out, stderr: &errb,
		getenv: func(k string) string { return vars[k] },
	})
	return out.String(), errb.String(), err
}

func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func TestRunWithoutOpenAIFailsClearly(t *testing.T) {
	t.Chdir(t.TempDir())
	_, _, err := runCLI(t, map[string]string{"DISCORD_TOKEN": "x"}, "run")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "OPENAI_API_KEY is not set") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunBadConfigNamesField(t *testing.T) {
	_, _, err := runCLI(t, map[string]string{"DISCORD_TOKEN": "x"}, "run", "-config", "testdata/bad.yaml")
	if exitCode(err) != 2 {
		t.Fatalf("exit %d, err %v", exitCode(err), err)
	}
	for _, want := range []string{"testdata/bad.yaml", `voice.mode: "loud" is not allowed (allowed values: stt_pipeline, realtime)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	_, _, err = runCLI(t, nil, "run", "-config", "testdata/missing.yaml")
	if err == nil || !strings.Contains(err.Error(), "testdata/missing.yaml") {
		t.Errorf("unreadable config: %v", err)
	}
}

func TestConfigCheck(t *testing.T) {
	out, _, err := runCLI(t, map[string]string{"DISCORD_TOKEN": "very-secret", "OPENAI_API_KEY": "sk-very-secret"},
		"config", "check", "../../banter.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "is valid") || !strings.Contains(out, "replyChainDepth: 40") {
		t.Errorf("unexpected output:\n%s", out)
	}
	if strings.Contains(out, "very-secret") {
		t.Error("config check printed a secret")
	}
	if !strings.Contains(out, "DISCORD_TOKEN: set (redacted)") {
		t.Error("config check does not say whether the token is set")
	}
	if _, _, err := runCLI(t, nil, "config", "check", "testdata/bad.yaml"); exitCode(err) != 2 {
		t.Errorf("bad file: exit %d", exitCode(err))
	}
	if _, _, err := runCLI(t, nil, "config"); exitCode(err) != 2 {
		t.Errorf("missing args: exit %d", exitCode(err))
	}
}

func TestVersionAndUnknown(t *testing.T) {
	out, _, err := runCLI(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "banter ") {
		t.Errorf("version: %q %v", out, err)
	}
	if _, _, err := runCLI(t, nil, "frobnicate"); exitCode(err) != 2 || !strings.Contains(err.Error(), "usage") {
		t.Errorf("unknown command: %v", err)
	}
	for _, arg := range []string{"help", "-h", "--help"} {
		if out, _, err := runCLI(t, nil, arg); err != nil || !strings.Contains(out, "banter config check FILE") {
			t.Errorf("%s: printed %q, err %v; want the usage and no error", arg, out, err)
		}
	}
}

func TestSimCommandsServeUntilCancelled(t *testing.T) {
	for _, which := range []string{"discord", "openai", "gemini"} {
		t.Run(which, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			out := &logbuf.Buffer{}
			done := make(chan error, 1)
			go func() {
				done <- dispatch(ctx, env{args: []string{"sim", which}, stdout: out, stderr: out, getenv: func(string) string { return "" }})
			}()
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(out.String(), "127.0.0.1:") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(out.String(), "127.0.0.1:") {
				t.Errorf("banter sim %s printed no loopback URL: %q", which, out.String())
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("banter sim %s: %v", which, err)
			}
		})
	}
	if _, _, err := runCLI(t, nil, "sim", "slack"); exitCode(err) != 2 {
		t.Errorf("unknown simulator: %v", err)
	}
	if _, _, err := runCLI(t, nil, "sim", "discord", "-addr", "8.8.8.8:80"); err == nil {
		t.Error("a non-loopback address was accepted")
	}
}

func TestSandboxChatsInTheTerminal(t *testing.T) {
	dir := t.TempDir()
	cfgPath := dir + "/banter.yaml"
	if err := os.WriteFile(cfgPath, []byte("activity:\n  replyCoalesceWindowSeconds: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := &logbuf.Buffer{}
	stdin, typed := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- dispatch(context.Background(), env{
			args:  []string{"sandbox", "-config", cfgPath, "-log", dir + "/bot.log"},
			stdin: stdin, stdout: out, stderr: out, getenv: func(string) string { return "" },
		})
	}()
	// typeLine writes a line unless the sandbox has already ended (then nobody reads stdin).
	var ended error
	exited := false
	typeLine := func(line string) {
		wrote := make(chan struct{})
		go func() {
			io.WriteString(typed, line)
			close(wrote)
		}()
		select {
		case <-wrote:
		case ended = <-done:
			exited = true
			typed.Close()
		}
	}
	typeLine("hey banter, are you there?\n")
	// The demo brain answers the yes/no question with a yes, by the member's name (the
	// terminal speaks as "sam", not as "you").
	replied := func() bool {
		for _, l := range strings.Split(out.String(), "\n") {
			if r, ok := strings.CutPrefix(l, "banter: "); ok && strings.Contains(strings.ToLower(r), "yes") && strings.Contains(r, "sam") {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(15 * time.Second)
	for !exited && !replied() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !exited {
		// The sandbox's simulator serves the control API too: what the bot
		// sent is readable there, and members can speak through it.
		ctl := ""
		for _, line := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "control API: "); ok {
				ctl = strings.Fields(v)[0]
			}
		}
		var sent []struct {
			Content string `json:"content"`
		}
		if resp, err := http.Get(ctl + "/messages?from=bot"); err != nil {
			t.Errorf("control API %q: %v", ctl, err)
		} else {
			_ = json.NewDecoder(resp.Body).Decode(&sent)
			resp.Body.Close()
			if len(sent) == 0 || !strings.Contains(strings.ToLower(sent[0].Content), "yes") || strings.Contains(sent[0].Content, "You said") {
				t.Errorf("control API: the bot sent %+v", sent)
			}
		}
		typeLine("/quit\n")
	}
	typed.Close()
	if !exited {
		ended = <-done
	}
	if ended != nil {
		t.Fatalf("sandbox: %v\n%s", ended, out.String())
	}
	if !replied() {
		t.Errorf("no bot reply printed:\n%s", out.String())
	}
	logs, _ := os.ReadFile(dir + "/bot.log")
	if !strings.Contains(string(logs), `"msg":"sent_reply"`) {
		t.Errorf("no sent_reply in the bot's log:\n%s", logs)
	}
}

func TestSimOpenAIScriptErrorsNameTheFile(t *testing.T) {
	path := t.TempDir() + "/script.yaml"
	os.WriteFile(path, []byte("rules:\n  - nonsense: true\n"), 0o600)
	_, _, err := runCLI(t, nil, "sim", "openai", "-script", path)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), path) {
		t.Errorf("bad script: %v", err)
	}
}

// TestSubcommandHelp: -h on a subcommand prints its usage on stdout and
// exits 0, as `banter -h` does; a bad flag is still a usage error (2).
func TestSubcommandHelp(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, "banter [run]"},
		{[]string{"run", "-h"}, "-log-format"},
		{[]string{"run", "-help"}, "-config"},
		{[]string{"replay", "-h"}, "-llm"},
		{[]string{"sandbox", "-h"}, "-log"},
		{[]string{"playground", "-h"}, "-addr"},
		{[]string{"sim", "openai", "-h"}, "-script"},
		{[]string{"sim", "discord", "-h"}, "-control-addr"},
		{[]string{"sim", "-h"}, "banter sim discord|openai|gemini"},
		{[]string{"sim", "gemini", "-h"}, "-connection-limit"},
		{[]string{"config", "-h"}, "banter config check FILE"},
		{[]string{"config", "check", "-h"}, "banter config check FILE"},
		{[]string{"health", "-h"}, "-ready"},
		{[]string{"version", "-h"}, "banter version"},
		{[]string{"help"}, "banter [run]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runCLI(t, nil, tt.args...)
			if err != nil || exitCode(err) != 0 {
				t.Fatalf("err = %v (exit %d), want exit 0", err, exitCode(err))
			}
			if !strings.Contains(out, "usage") || !strings.Contains(out, tt.want) {
				t.Errorf("stdout = %q, want the usage with %q", out, tt.want)
			}
		})
	}
	for _, args := range [][]string{{"run", "-no-such-flag"}, {"health", "-no-such-flag"}, {"config", "check", "-no-such-flag", "f.yaml"}} {
		_, stderr, err := runCLI(t, nil, args...)
		if exitCode(err) != 2 || !strings.Contains(stderr, "usage") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the usage on stderr", args, exitCode(err), stderr)
		}
	}
	// Usage mistakes without -h still exit 2.
	for _, args := range [][]string{{"config"}, {"config", "check"}, {"config", "lint", "f.yaml"}, {"sim"}, {"health", "extra"}} {
		if _, _, err := runCLI(t, nil, args...); exitCode(err) != 2 {
			t.Errorf("%v: exit %d, want 2", args, exitCode(err))
		}
	}
}

// TestURLCredentialsRedacted: credentials in a URL (userinfo, key=-style query values) are
// never printed by `banter config check` nor logged by banter's logger.
func TestURLCredentialsRedacted(t *testing.T) {
	out, _, err := runCLI(t, map[string]string{"DISCORD_TOKEN": "t", "OPENAI_BASE_URL": "http://user:hunter2@llm.local/v1"},
		"config", "check", "../../banter.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "user:hunter2") {
		t.Errorf("config check prints the URL's credentials:\n%s", out)
	}
	if !strings.Contains(out, "llm.local/v1") {
		t.Errorf("config check lost the base URL:\n%s", out)
	}
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		level := new(slog.LevelVar)
		log := newLogger(&buf, format, level)
		log.Error("reply_failed", "error", errors.New(`POST "http://user:hunter2@llm.local/v1/responses": 500`),
			"url", "wss://llm.local/v1/realtime?model=m&api_key=sk-hunter2")
		if s := buf.String(); strings.Contains(s, "hunter2") {
			t.Errorf("%s log leaks credentials: %s", format, s)
		}
	}
}

// TestProviderWithoutKey: config check warns with the slot and the variable; run refuses to
// start and names them.
func TestProviderWithoutKey(t *testing.T) {
	vars := map[string]string{"DISCORD_TOKEN": "x", "OPENAI_API_KEY": "sk-x"}
	out, _, err := runCLI(t, vars, "config", "check", "testdata/providers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const want = "voice.generationLlm: provider gemini: GEMINI_API_KEY is not set"
	if !strings.Contains(out, "# warning: "+want) {
		t.Errorf("config check does not name the slot without a key:\n%s", out)
	}
	_, _, err = runCLI(t, vars, "run", "-config", "testdata/providers.yaml")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), want) {
		t.Errorf("run without the key: exit %d, %v", exitCode(err), err)
	}
	vars["GEMINI_API_KEY"] = "g-very-secret"
	out, _, err = runCLI(t, vars, "config", "check", "testdata/providers.yaml")
	if err != nil || strings.Contains(out, "warning") || strings.Contains(out, "g-very-secret") {
		t.Errorf("with the key set: %v\n%s", err, out)
	}
}
