// Command soak runs banter for a long time against the simulators with text and voice traffic
// and random faults, and reports the bot's heap and goroutines over time with the fate of every
// addressed text message and every voice utterance (answered, explained, unexplained):
//
//	go run ./bench/soak -duration 30m
//	go run ./bench/soak -duration 10m -voice-mode realtime
//
// The bot is the real `banter run`, built from ./cmd/banter and run as its own process, so
// that the heap and goroutine counts (read from its /metrics) are the bot's alone; the
// simulators run in this process. Not part of make test.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

func main() {
	duration := flag.Duration("duration", 30*time.Minute, "how long to run")
	every := flag.Duration("report", 30*time.Second, "report interval")
	rate := flag.Duration("message-every", 300*time.Millisecond, "mean interval between text messages")
	faultEvery := flag.Duration("fault-every", 15*time.Second, "mean interval between faults")
	clip := flag.String("clip", "cmd/banter/testdata/hey-banter-weather.wav", "48 kHz stereo WAV the voice member says")
	logPath := flag.String("log", "", "also write the bot's JSON log to this file")
	voiceMode := flag.String("voice-mode", "stt_pipeline", "the bot's voice.mode: stt_pipeline or realtime")
	flag.Parse()
	if *voiceMode != "stt_pipeline" && *voiceMode != "realtime" {
		fmt.Fprintf(os.Stderr, "soak: -voice-mode %q: want stt_pipeline or realtime\n", *voiceMode)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, params{duration: *duration, every: *every, rate: *rate, faultEvery: *faultEvery, clip: *clip,
		logPath: *logPath, voiceMode: *voiceMode}); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type params struct {
	duration, every, rate, faultEvery time.Duration
	clip, logPath, voiceMode          string
}

// world is the simulators and the bot process.
type world struct {
	dsim    *discordsim.Server
	osim    *openaisim.Server
	vs      *voicesim.Server
	guild   discordsim.GuildID
	texts   []discordsim.ChannelID
	voice   discordsim.ChannelID
	users   []discordsim.UserID
	metrics string // the bot's metrics address
	ledger  *ledger
	mode    string // the bot's voice.mode
	member  *voicesim.Member
}

func run(ctx context.Context, p params) error {
	samples, err := readClip(p.clip)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "banter-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "banter")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/banter").CombinedOutput(); err != nil {
		return fmt.Errorf("build banter (run from the repository root): %v\n%s", err, out)
	}
	w, cleanup, err := newWorld()
	if err != nil {
		return err
	}
	defer cleanup()
	w.mode = p.voiceMode

	bot, logs, err := w.startBot(ctx, dir, bin, p.logPath)
	if err != nil {
		return err
	}
	defer func() {
		_ = bot.Process.Signal(os.Interrupt)
		_ = bot.Wait()
	}()
	go w.ledger.read(logs)
	readyCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.dsim.Await(readyCtx, func() bool { return w.dsim.Connected(w.dsim.BotID()) }); err != nil {
		return fmt.Errorf("the bot never logged in: %w", err)
	}

	runCtx, stopRun := context.WithTimeout(ctx, p.duration)
	defer stopRun()
	done := make(chan struct{})
	go func() { defer close(done); w.textTraffic(runCtx, p.rate) }()
	voiceDone := make(chan struct{})
	go func() { defer close(voiceDone); w.voiceTraffic(runCtx, samples) }()
	faultsDone := make(chan struct{})
	go func() { defer close(faultsDone); w.faults(runCtx, p.faultEvery) }()

	fmt.Printf("%-8s %8s %8s %10s %9s %9s %9s %11s %6s %6s %6s %6s %7s\n", "elapsed", "heap_MB", "inuse_MB", "goroutines",
		"addressed", "answered", "explained", "unexplained", "voice", "v_ans", "v_expl", "v_unex", "faults")
	start := time.Now()
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	report := func() {
		heap, inuse, goroutines, err := scrape(w.metrics)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak: metrics:", err)
		}
		s := w.ledger.snapshot(w.dsim, time.Minute)
		fmt.Printf("%-8s %8.1f %8.1f %10.0f %9d %9d %9d %11d %6d %6d %6d %6d %7d\n", time.Since(start).Round(time.Second), heap/1e6, inuse/1e6, goroutines,
			s.addressed, s.answered, s.explained, s.unexplained, s.voice, s.vAnswered, s.vExplained, s.vUnexplained, s.faults)
	}
	for runCtx.Err() == nil {
		select {
		case <-runCtx.Done():
		case <-tick.C:
			report()
		}
	}
	<-done
	<-voiceDone
	<-faultsDone
	// Let the last turns finish, then account for everything.
	settle, cancelSettle := context.WithTimeout(ctx, 90*time.Second)
	defer cancelSettle()
	for settle.Err() == nil {
		if s := w.ledger.snapshot(w.dsim, 0); s.pending == 0 && s.vPending == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	report()
	s := w.ledger.snapshot(w.dsim, 0)
	fmt.Printf("soak: duration=%s voice_mode=%s addressed=%d answered=%d explained=%d unexplained=%d voice_utterances=%d voice_answered=%d voice_explained=%d voice_unexplained=%d faults=%d\n",
		p.duration, p.voiceMode, s.addressed, s.answered, s.explained, s.pending, s.voice, s.vAnswered, s.vExplained, s.vPending, s.faults)
	fmt.Printf("soak: faults by kind: %s\n", formatCounts(s.byFault))
	fmt.Printf("soak: voice utterances explained by: %s\n", formatCounts(s.voiceWhy))
	for _, u := range w.ledger.unexplainedVoice() {
		fmt.Println("soak: voice utterance without an outcome:", u)
	}
	if s.pending > 0 || s.vPending > 0 {
		return errors.New("addressed messages or utterances lost without a trace")
	}
	return nil
}

// formatCounts lists name=count, sorted by name.
func formatCounts(m map[string]int) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", n, m[n])
	}
	return b.String()
}

func newWorld() (*world, func(), error) {
	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		return nil, nil, err
	}
	dsim := discordsim.New(discordsim.WithVoiceSim(vs))
	if err := dsim.Start("127.0.0.1:0"); err != nil {
		vs.Close()
		return nil, nil, err
	}
	osim, err := openaisim.Start("127.0.0.1:0", openaisim.WithLatency(openaisim.Latency{TimeToFirstToken: 100 * time.Millisecond}))
	if err != nil {
		dsim.Close()
		vs.Close()
		return nil, nil, err
	}
	w := &world{dsim: dsim, osim: osim, vs: vs, ledger: newLedger()}
	w.guild = dsim.CreateGuild("soak")
	for _, name := range []string{"general", "random", "help"} {
		w.texts = append(w.texts, dsim.CreateTextChannel(w.guild, name))
	}
	w.voice = dsim.CreateVoiceChannel(w.guild, "Voice")
	for _, name := range []string{"alice", "bob", "carol", "dave"} {
		u := dsim.CreateUser(name)
		dsim.AddMember(w.guild, u)
		w.users = append(w.users, u)
	}
	return w, func() { osim.Close(); dsim.Close(); vs.Close() }, nil
}

// startBot writes a config and starts `banter run`; its log comes back on the reader.
func (w *world) startBot(ctx context.Context, dir, bin, logPath string) (*exec.Cmd, io.Reader, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	w.metrics = ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  voiceCaFile: %s\nmetrics:\n  listen: %s\nstore:\n  dsn: %s\nllm:\n  maxRetries: 1\n  timeoutSeconds: 10\nactivity:\n  replyCoalesceWindowSeconds: 1\n  maxPromptsPerHour: 100000\nvoice:\n  mode: %s\n  joinGreetingWindowSeconds: 0\n",
		w.dsim.APIBaseURL(), w.vs.CAFile(), w.metrics, filepath.Join(dir, "banter.db"), w.mode)
	cfgPath := filepath.Join(dir, "banter.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "run", "-config", cfgPath)
	cmd.Env = append(os.Environ(), "DISCORD_TOKEN="+w.dsim.Token(), "OPENAI_BASE_URL="+w.osim.BaseURL(), "OPENAI_API_KEY=sk-soak")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	var logs io.Reader = stderr
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, nil, err
		}
		logs = io.TeeReader(stderr, f)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, logs, nil
}

// textTraffic posts messages at random in the text channels; about half address the bot.
func (w *world) textTraffic(ctx context.Context, mean time.Duration) {
	for i := 0; ; i++ {
		if !sleep(ctx, jitter(mean)) {
			return
		}
		ch := w.texts[rand.IntN(len(w.texts))]
		u := w.users[rand.IntN(len(w.users))]
		addressed := rand.IntN(2) == 0
		text := fmt.Sprintf("message %d about the weather and %s", i, []string{"tacos", "music", "cats", "rain"}[rand.IntN(4)])
		if addressed {
			text = discordsim.MentionUser(w.dsim.BotID()) + " " + text + "?"
		}
		m, err := w.dsim.Post(ctx, u, ch, text)
		if err != nil {
			continue
		}
		if addressed {
			w.ledger.addressed(m.ID)
		}
	}
}

func jitter(mean time.Duration) time.Duration {
	return time.Duration(float64(mean) * (0.5 + rand.Float64()))
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func readClip(path string) ([]int16, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("clip (run from the repository root): %w", err)
	}
	samples, format, err := wav.Decode(nil, b)
	if err != nil {
		return nil, fmt.Errorf("clip %s: %w", path, err)
	}
	if format.Rate != 48000 || format.Channels != 2 {
		return nil, fmt.Errorf("clip %s: want 48 kHz stereo, got %+v", path, format)
	}
	return samples, nil
}

// scrape reads the bot's heap (allocated and in use) and goroutine count from its /metrics.
func scrape(addr string) (heap, inuse, goroutines float64, err error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, 0, 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n", addr)
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var v float64
		switch {
		case strings.HasPrefix(line, "go_memstats_heap_alloc_bytes "):
			fmt.Sscan(strings.TrimPrefix(line, "go_memstats_heap_alloc_bytes "), &v)
			heap = v
		case strings.HasPrefix(line, "go_memstats_heap_inuse_bytes "):
			fmt.Sscan(strings.TrimPrefix(line, "go_memstats_heap_inuse_bytes "), &v)
			inuse = v
		case strings.HasPrefix(line, "go_goroutines "):
			fmt.Sscan(strings.TrimPrefix(line, "go_goroutines "), &v)
			goroutines = v
		}
	}
	return heap, inuse, goroutines, sc.Err()
}
