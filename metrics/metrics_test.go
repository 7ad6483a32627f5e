package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	reg := NewRegistry("v-test")
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "banter_test_events_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)

	var notReady atomic.Bool
	notReady.Store(true)
	ready := func() error {
		if notReady.Load() {
			return errors.New("discord gateway not connected")
		}
		return nil
	}
	RegisterReady(reg, ready)
	srv, err := Listen("127.0.0.1:0", reg, ready, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	base := "http://" + srv.Addr()

	code, body := get(t, base+"/metrics")
	for _, want := range []string{"banter_test_events_total 3", `banter_build_info{version="v-test"} 1`, "banter_ready 0", "go_goroutines", "process_"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if code, body := get(t, base+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "discord gateway not connected") {
		t.Errorf("/readyz before ready = %d %q", code, body)
	}
	notReady.Store(false)
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz when ready = %d", code)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, "banter_ready 1") {
		t.Error("banter_ready is not 1 when ready")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answering after shutdown")
	}
}

func TestListenTakenPort(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := Listen("127.0.0.1:0", NewRegistry("x"), nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.ln.Close()
	_, err = Listen(a.Addr(), NewRegistry("x"), nil, logger)
	if err == nil || !strings.Contains(err.Error(), "metrics.listen") {
		t.Fatalf("err = %v, want one naming metrics.listen", err)
	}
}
