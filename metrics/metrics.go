// Package metrics owns banter's Prometheus registry and the HTTP server that exposes it with
// health endpoints. Each pipeline package defines its own metrics and registers them on the
// registry given to it; nothing here is global.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry with the Go runtime and process collectors and banter's build
// info gauge.
func NewRegistry(version string) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "banter_build_info",
		Help: "Always 1; the version label says which banter is running.",
	}, []string{"version"})
	info.WithLabelValues(version).Set(1)
	reg.MustRegister(info)
	return reg
}

// ReadyFunc reports whether banter is ready to serve (nil) or why not.
type ReadyFunc func() error

// RegisterReady exports banter_ready: 1 while ready reports nil (the /readyz condition:
// connected to the Discord gateway), else 0. Alerting on it (BanterNotReady in
// deploy/prometheus/alerts.yml) needs no probe of /readyz.
func RegisterReady(reg prometheus.Registerer, ready ReadyFunc) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "banter_ready",
		Help: "1 while banter is ready (connected to the Discord gateway, as /readyz), else 0.",
	}, func() float64 {
		if ready != nil && ready() != nil {
			return 0
		}
		return 1
	}))
}

// Server serves /metrics, /healthz and /readyz.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen binds addr and returns a Server ready to Serve. Binding first lets the caller fail
// fast on a taken port before connecting to Discord. Scrape errors go to logger (nil discards
// them).
func Listen(addr string, gatherer prometheus.Gatherer, ready ReadyFunc, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s (metrics.listen): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ready != nil {
			if err := ready(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	return &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln}, nil
}

// Addr is the bound address (useful when listening on port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("metrics: serve: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := s.srv.Shutdown(shutdownCtx)
		<-errc
		if err != nil {
			return fmt.Errorf("metrics: shutdown: %w", err)
		}
		return nil
	}
}
