package openaisim

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func TestRunStandalone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- RunStandalone(ctx, "127.0.0.1:0", pw); pw.Close() }()
	sc := bufio.NewScanner(pr)
	var base, rt string
	for (base == "" || rt == "") && sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "base URL:"); ok {
			base = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "realtime URL:"); ok {
			rt = strings.TrimSpace(v)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") || !strings.HasPrefix(rt, "ws://127.0.0.1:") {
		t.Fatalf("banner: base %q realtime %q", base, rt)
	}
	c := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("x"), option.WithMaxRetries(0))
	if _, err := c.Models.List(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunStandalone did not return after cancel")
	}
}

func TestRunStandaloneRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:80", ":8080", "nonsense"} {
		if err := RunStandalone(context.Background(), addr, io.Discard); err == nil {
			t.Errorf("%q accepted", addr)
		}
	}
}
