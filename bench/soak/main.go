// Command soak runs banter for a long time against the simulators with text and voice traffic
// and random faults, and reports the bot's heap and goroutines over time with the fate of every
// addressed text message (answered, explained, unexplained):
//
//	go run ./bench/soak -duration 30m
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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, params{duration: *duration, every: *every, rate: *rate, faultEvery: *faultEvery, clip: *clip, logPath: *logPath}); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type params struct {
	duration, every, rate, faultEvery time.Duration
	clip, logPath                     string
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

	fmt.Printf("%-8s %10s %10s %10s %9s %9s %9s %11s %7s %8s\n", "elapsed", "heap_MB", "inuse_MB", "goroutines",
		"addressed", "answered", "explained", "unexplained", "voice", "faults")
	start := time.Now()
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	report := func() {
		heap, inuse, goroutines, err := scrape(w.metrics)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak: metrics:", err)
		}
		s := w.ledger.snapshot(w.dsim, time.Minute)
		fmt.Printf("%-8s %10.1f %10.1f %10.0f %9d %9d %9d %11d %7d %8d\n", time.Since(start).Round(time.Second), heap/1e6, inuse/1e6, goroutines,
			s.addressed, s.answered, s.explained, s.unexplained, s.voiceReplies, s.faults)
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
	for settle.Err() == nil && w.ledger.snapshot(w.dsim, 0).pending > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	report()
	s := w.ledger.snapshot(w.dsim, 0)
	fmt.Printf("soak: duration=%s addressed=%d answered=%d explained=%d unexplained=%d voice_replies=%d faults=%d\n",
		p.duration, s.addressed, s.answered, s.explained, s.pending, s.voiceReplies, s.faults)
	if s.pending > 0 {
		return errors.New("addressed messages lost without a trace")
	}
	return nil
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
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\n  voiceCaFile: %s\nmetrics:\n  listen: %s\nstore:\n  dsn: %s\nllm:\n  maxRetries: 1\n  timeoutSeconds: 10\nactivity:\n  replyCoalesceWindowSeconds: 1\n  maxPromptsPerHour: 100000\n",
		w.dsim.APIBaseURL(), w.vs.CAFile(), w.metrics, filepath.Join(dir, "banter.db"))
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

// voiceTraffic keeps one member in the voice channel asking the bot something every few
// seconds, asking it to join again whenever it is not there.
func (w *world) voiceTraffic(ctx context.Context, samples []int16) {
	member, err := w.dsim.JoinVoiceMember(ctx, w.users[0], w.voice, voicesim.MemberOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: voice member:", err)
		return
	}
	defer member.Leave()
	for ctx.Err() == nil {
		if st, ok := w.dsim.VoiceStateOf(w.guild, w.dsim.BotID()); !ok || st.Channel != w.voice {
			_, _ = w.dsim.Post(ctx, w.users[0], w.texts[0], "!join")
			if !sleep(ctx, 3*time.Second) {
				return
			}
			continue
		}
		w.osim.QueueTranscripts("hey banter, what's the weather like today?")
		_ = member.PlayPCM(ctx, samples)
		if !sleep(ctx, jitter(6*time.Second)) {
			return
		}
	}
}

// faults injects a random fault every so often: gateway drops and closes, op 7, op 9, send
// errors (before and after the create took effect), model errors, and on the voice side the
// voice WebSocket closed with 4006/4009/4014/4015 or dropped, and the UDP path silent.
func (w *world) faults(ctx context.Context, mean time.Duration) {
	bot := string(w.dsim.BotID())
	all := []struct {
		name string
		do   func() error
	}{
		{"gateway_tcp_drop", w.dsim.DropGateway},
		{"gateway_close_4000", func() error { return w.dsim.CloseGateway(discordsim.CloseUnknownError) }},
		{"gateway_op7", w.dsim.ForceReconnect},
		{"gateway_op9", func() error { return w.dsim.ForceInvalidSession(false) }},
		{"send_500", func() error { w.dsim.FailNext(discordsim.RouteMessageCreate, 1, 500); return nil }},
		{"send_503_after_commit", func() error { w.dsim.FailNextAfterCommit(discordsim.RouteMessageCreate, 1, 503); return nil }},
		{"model_500", func() error {
			return w.osim.AddRule(openaisim.Rule{Name: "fault", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Fault: openaisim.Fault{Status: 500}, Times: 2})
		}},
		{"voice_close_4006", func() error { return w.vs.CloseVoice(bot, 4006) }},
		{"voice_close_4009", func() error { return w.vs.CloseVoice(bot, 4009) }},
		{"voice_close_4014", func() error { return w.vs.CloseVoice(bot, 4014) }},
		{"voice_close_4015", func() error { return w.vs.CloseVoice(bot, 4015) }},
		{"voice_ws_drop", func() error { return w.vs.DropVoice(bot) }},
		{"voice_udp_silent_5s", func() error {
			w.vs.SetFaults(bot, voicesim.ToServer, voicesim.Faults{LossPercent: 100})
			time.AfterFunc(5*time.Second, func() { w.vs.SetFaults(bot, voicesim.ToServer, voicesim.Faults{}) })
			return nil
		}},
	}
	for ctx.Err() == nil {
		if !sleep(ctx, jitter(mean)) {
			return
		}
		f := all[rand.IntN(len(all))]
		if err := f.do(); err == nil {
			w.ledger.fault(f.name)
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
