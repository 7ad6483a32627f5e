package openaisim

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
)

// RunStandalone serves a simulator on addr until ctx is done (this is
// `banter sim openai`). addr must be a loopback address ("127.0.0.1:8089",
// "[::1]:0", "localhost:0"); an empty addr means "127.0.0.1:0". It prints the
// base URL and realtime URL to out once listening. Options (rules, latency,
// models, API key, logger) configure the simulator as in Start.
func RunStandalone(ctx context.Context, addr string, out io.Writer, opts ...Option) error {
	s, err := startLoopback(addr, opts)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "openaisim: OpenAI API simulator listening\n  base URL:     %s\n  realtime URL: %s?model=gpt-realtime\n", s.BaseURL(), s.RealtimeURL())
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("openaisim: standalone: write banner: %w", err)
	}
	<-ctx.Done()
	return s.Close()
}

// RunGeminiStandalone is `banter sim gemini`: RunStandalone with a banner for the Gemini Live
// face (the same server, rules and control API): the base URL a client or a kind gemini
// provider takes, the Live socket, and the Gemini control endpoints.
func RunGeminiStandalone(ctx context.Context, addr string, out io.Writer, opts ...Option) error {
	s, err := startLoopback(addr, opts)
	if err != nil {
		return err
	}
	base := "http" + strings.TrimPrefix(s.GeminiURL(), "ws")
	_, err = fmt.Fprintf(out, "openaisim: Gemini Live API simulator listening (any non-empty key)\n"+
		"  base URL:    %s   (providers.NAME.baseUrl with kind: gemini)\n"+
		"  Live socket: %s%s?key=KEY\n"+
		"  control:     GET %s/_sim/gemini/sessions, GET %s/_sim/gemini/messages, POST %s/_sim/gemini/goaway?time_left=2s,\n"+
		"               POST %s/_sim/gemini/advance?by=15m, POST %s/_sim/script, GET %s/_sim/requests\n",
		base, s.GeminiURL(), GeminiLivePath, base, base, base, base, base, base)
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("openaisim: standalone: write banner: %w", err)
	}
	<-ctx.Done()
	return s.Close()
}

// startLoopback starts a simulator on a loopback addr ("": 127.0.0.1:0).
func startLoopback(addr string, opts []Option) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	return Start(addr, opts...)
}

// checkLoopback refuses addresses other than loopback ones.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("openaisim: standalone: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("openaisim: standalone: address %q is not loopback; the simulator only listens on 127.0.0.1/::1", addr)
	}
	return nil
}
