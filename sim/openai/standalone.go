package openaisim

import (
	"context"
	"fmt"
	"io"
	"net"
)

// RunStandalone serves a simulator on addr until ctx is done (this is
// `banter sim openai`). addr must be a loopback address ("127.0.0.1:8089",
// "[::1]:0", "localhost:0"); an empty addr means "127.0.0.1:0". It prints the
// base URL and realtime URL to out once listening. Options (rules, latency,
// models, API key, logger) configure the simulator as in Start.
func RunStandalone(ctx context.Context, addr string, out io.Writer, opts ...Option) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return err
	}
	s, err := Start(addr, opts...)
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
