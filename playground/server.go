package playground

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/redact"
)

//go:embed web
var webFS embed.FS

// Info is GET /api/info: what runs, for the page's header and links.
type Info struct {
	URL        string `json:"url"`
	Demo       bool   `json:"demo"`
	Model      string `json:"model"`
	ModelURL   string `json:"model_url"`
	BotName    string `json:"bot_name"`
	BotID      string `json:"bot_id"`
	You        string `json:"you_id"`
	YouName    string `json:"you_name"`
	GuildName  string `json:"guild_name"`
	Text       string `json:"text_channel_id"`
	Thread     string `json:"thread_id"`
	Voice      string `json:"voice_channel_id"`
	ControlURL string `json:"control_url"`
	OpenAIURL  string `json:"openai_url,omitempty"`
	MetricsURL string `json:"metrics_url"`
	LogPath    string `json:"log_path"`
	ConfigPath string `json:"config_path"`
}

// server serves the page and its API.
type server struct {
	w      *world
	file   configFile
	hub    *Hub
	botEnv func(string) string
	info   Info

	watcher atomic.Pointer[config.Watcher]
	metrics atomic.Pointer[string]
	store   atomic.Pointer[MemoryStore] // the bot's store, once open (the memory panel)
	editMu  sync.Mutex                  // one config edit at a time
}

func newServer(w *world, file configFile, hub *Hub, botEnv func(string) string, demo bool, cfg *config.Config) *server {
	s := &server{w: w, file: file, hub: hub, botEnv: botEnv}
	s.info = Info{Demo: demo, Model: cfg.LLM.Model, ModelURL: redact.URL(cfg.LLM.BaseURL), BotName: cfg.Bot.Name,
		BotID: string(w.ds.BotID()), You: string(w.you), YouName: youName, GuildName: guildName, Text: string(w.general),
		Thread: string(w.thread), Voice: string(w.voice), ControlURL: w.ctlURL, ConfigPath: file.path}
	if w.osim != nil {
		s.info.OpenAIURL = w.osim.BaseURL()
		s.info.Model, s.info.ModelURL = "demo brain", w.osim.BaseURL()
	}
	return s
}

func (s *server) setWatcher(w *config.Watcher) { s.watcher.Store(w) }
func (s *server) setMetrics(addr string)       { s.metrics.Store(&addr) }

// routes are the page, its static files, the playground's API, and the
// simulators' control APIs and the bot's /metrics behind the same origin.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFS, "web")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "favicon.svg") // for pages without the icon link (a tab on /metrics)
	})
	mux.HandleFunc("GET /api/info", s.getInfo)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/config", s.getConfig)
	mux.HandleFunc("POST /api/config", s.postConfig)
	mux.HandleFunc("GET /api/memory", s.getMemory)
	mux.HandleFunc("POST /api/memory/{action}", s.postMemory)
	mux.HandleFunc("GET /metrics", s.proxyMetrics)
	mux.Handle("/discord/", http.StripPrefix("/discord", s.proxy(s.w.ctlURL)))
	if s.w.osim != nil {
		mux.Handle("/openai/", http.StripPrefix("/openai", s.proxy("http://"+s.w.osim.Addr())))
	}
	return guard(mux)
}

// guard refuses requests that do not come from this machine's page:
// another Host (DNS rebinding) or another Origin (a page of another site
// driving the playground through the user's browser). Clients without an
// Origin (curl, scripts) are welcome.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "playground: only for http://127.0.0.1 or http://localhost", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host != r.Host {
				http.Error(w, "playground: requests from other sites are refused", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// proxy forwards to a simulator's API (streams and WebSockets included). The
// Origin was checked by guard; the simulator sees a same-origin client.
func (s *server) proxy(target string) http.Handler {
	u, _ := url.Parse(target)
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Header.Del("Origin")
		},
		FlushInterval: -1,
		// A simulator going away at shutdown while the page reconnects is not worth a line.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

func (s *server) getInfo(w http.ResponseWriter, _ *http.Request) {
	info := s.info
	if m := s.metrics.Load(); m != nil {
		info.MetricsURL = "http://" + *m + "/metrics"
	}
	writeJSON(w, http.StatusOK, info)
}

// proxyMetrics serves the bot's /metrics on the page's origin (for the chart).
func (s *server) proxyMetrics(w http.ResponseWriter, r *http.Request) {
	m := s.metrics.Load()
	if m == nil {
		http.Error(w, "playground: the bot's metrics server is not up yet", http.StatusServiceUnavailable)
		return
	}
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: *m})
	p.ErrorLog = log.New(io.Discard, "", 0) // the bot's metrics server going away at shutdown
	p.ServeHTTP(w, r)
}

// events is GET /api/events: the bot's log events (Info and above) as a
// text/event-stream, the recent ones first.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	backlog, events, cancel := s.hub.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(e Event) bool {
		b, err := json.Marshal(e)
		if err != nil {
			return true
		}
		_, err = fmt.Fprintf(w, "data: %s\n\n", b)
		return err == nil
	}
	for _, e := range backlog {
		if !send(e) {
			return
		}
	}
	fl.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-events:
			if !send(e) {
				return
			}
			fl.Flush()
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is every API error: {"error": "..."}.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody{err.Error()})
}

var errNoWatcher = errors.New("playground: the bot has not started its config watcher yet")

// trimConfigPrefix drops the "config: FILE: " the loader puts in front of
// a validation error, leaving "field: what is wrong".
func trimConfigPrefix(msg, path string) string {
	msg = strings.TrimPrefix(msg, "config: ")
	return strings.TrimPrefix(msg, path+": ")
}
