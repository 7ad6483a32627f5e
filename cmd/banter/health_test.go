package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/banterbot/banter/metrics"
)

// TestHealthCommand: `banter health` answers from the metrics server the environment names
// (an address on every interface is asked over loopback), -ready follows /readyz, and a
// server that is not there is an error (the container's HEALTHCHECK then fails).
func TestHealthCommand(t *testing.T) {
	var connected atomic.Bool
	ready := func() error {
		if !connected.Load() {
			return errors.New("not connected to the Discord gateway")
		}
		return nil
	}
	srv, err := metrics.Listen("0.0.0.0:0", metrics.NewRegistry("t"), ready, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	_, port, _ := net.SplitHostPort(srv.Addr())
	vars := map[string]string{"BANTER_METRICS_LISTEN": "0.0.0.0:" + port}

	out, _, err := runCLI(t, vars, "health")
	if err != nil || !strings.Contains(out, "127.0.0.1:"+port+"/healthz: ok") {
		t.Errorf("health = %q, %v", out, err)
	}
	if _, _, err := runCLI(t, vars, "health", "-ready"); err == nil || !strings.Contains(err.Error(), "503") || exitCode(err) != 1 {
		t.Errorf("health -ready while not ready: %v (exit %d)", err, exitCode(err))
	}
	connected.Store(true)
	if out, _, err := runCLI(t, vars, "health", "-ready"); err != nil || !strings.Contains(out, "ready") {
		t.Errorf("health -ready when ready = %q, %v", out, err)
	}
	cancel()
	<-done
	done <- nil
	if _, _, err := runCLI(t, vars, "health"); err == nil || exitCode(err) != 1 {
		t.Errorf("health with no server: %v (exit %d)", err, exitCode(err))
	}
	if _, _, err := runCLI(t, map[string]string{"BANTER_METRICS_LISTEN": "nope"}, "health"); exitCode(err) != 2 || !strings.Contains(err.Error(), "metrics.listen") {
		t.Errorf("bad address: %v (exit %d)", err, exitCode(err))
	}
}
