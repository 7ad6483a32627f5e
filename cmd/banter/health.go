package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/banterbot/banter/config"
)

// healthCommand implements `banter health`: GET /healthz (or /readyz with -ready) on the
// metrics address the config and BANTER_METRICS_LISTEN give, exit status 0 when it answers 200.
// It is the container image's HEALTHCHECK, so the image needs no HTTP client of its own.
func healthCommand(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("banter health", flag.ContinueOnError)
	configPath := fs.String("config", "", "config file (else $BANTER_CONFIG, else ./banter.yaml if present, else defaults)")
	ready := fs.Bool("ready", false, "check /readyz (connected to Discord) instead of /healthz")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parseFlags(fs, e.args, e, "banter health [-config FILE] [-ready] [-timeout D]"); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return &usageError{fmt.Sprintf("banter health: unexpected argument %q", fs.Arg(0))}
	}
	cfg, err := config.Load(config.Locate(*configPath, e.getenv), e.getenv)
	if err != nil {
		return &usageError{err.Error()}
	}
	if cfg.Metrics.Listen == "" {
		return &usageError{"metrics.listen is empty: the health endpoints are disabled"}
	}
	host, port, err := net.SplitHostPort(cfg.Metrics.Listen)
	if err != nil {
		return &usageError{fmt.Sprintf("metrics.listen %q: %v", cfg.Metrics.Listen, err)}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every interface: ask over loopback
	}
	path := "/healthz"
	if *ready {
		path = "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s: %s: %s", url, resp.Status, body)
	}
	fmt.Fprintf(e.stdout, "%s: %s", url, body)
	return nil
}
