package discordsim

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

func TestRunStandalone(t *testing.T) {
	if err := RunStandalone(t.Context(), "0.0.0.0:0", io.Discard); err == nil {
		t.Fatal("a non-loopback address must be refused")
	}
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := RunStandalone(ctx, "127.0.0.1:0", pw)
		pw.Close()
		done <- err
	}()
	fields := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "serving until interrupted" {
			break
		}
		for _, k := range []string{"bot token", "API base URL", "gateway URL", "voice CA", "text channel"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				fields[k] = strings.Fields(v)[0]
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if len(fields) != 5 {
		t.Fatalf("printed %v", fields)
	}
	if _, err := os.Stat(fields["voice CA"]); err != nil {
		t.Errorf("voice CA: %v", err)
	}
	s := &Server{base: fields["API base URL"]}
	var me wireSelfUser
	if resp := rest(t, s, "GET", "/api/v10/users/@me", "Bot "+fields["bot token"], nil, &me); resp.StatusCode != 200 || me.Username != "simbot" {
		t.Fatalf("users/@me: %d %+v", resp.StatusCode, me)
	}
	var msgs []wireMessage
	if resp := rest(t, s, "GET", "/api/v10/channels/"+fields["text channel"]+"/messages", "Bot "+fields["bot token"], nil, &msgs); resp.StatusCode != 200 {
		t.Fatalf("messages: %d", resp.StatusCode)
	}
	if s.GatewayURL() != fields["gateway URL"] {
		t.Errorf("gateway URL %q", fields["gateway URL"])
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fields["voice CA"]); err == nil {
		t.Error("the voice CA file outlived the simulator")
	}
}
