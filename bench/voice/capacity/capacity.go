// Package capacity runs banter's voice service at scale against the
// simulators: many concurrent voice sessions, each with simulated members who
// talk about half the time and a bot that answers them, and reports how
// punctual the bot's outgoing frames were, how much CPU it took and the memory
// per session. The bench/voice command runs the full size; the package test
// runs a small variant within CI budgets.
package capacity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/discord/voice/pace"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/voice"
)

// Params size a run.
type Params struct {
	// Sessions is the number of concurrent voice sessions (one guild each).
	Sessions int
	// Members per session (default 2).
	Members int
	// Duration of the talking phase.
	Duration time.Duration
	// Clip is a 48 kHz stereo WAV the members say (an addressed question).
	Clip []byte
	// SendSpin is voice.Options.SendSpin (0: transport default 1 ms;
	// negative: off).
	SendSpin time.Duration
	// MembersHear lets the simulated members receive and decode what is
	// said. Off by default: their decoding is simulator work on the same
	// cores (about a third of the CPU at 50 sessions) and the run measures
	// the bot's sending, which the voice server still receives and counts.
	MembersHear bool
	// GCPercent, if > 0, is the GOGC used during the run (restored after).
	// The default GC (100) pauses the senders enough to make ~1.3 % of the
	// frames late at 50 sessions; 400 brings it under 0.05 % (docs/voice.md).
	GCPercent int
	// RealtimePriority is voice.Options.SendRealtimePriority (0: off).
	RealtimePriority int
	// Clock sends every session's frames on one discord/voice SendClock
	// (voice.Options.SendClock); SharedSocket gives it one UDP socket for
	// all connections (batched sends). Lateness is then measured where the
	// clock sends each frame.
	Clock, SharedSocket bool
	// ClockLead is the send clock's dvoice.ClockOptions.Lead (0: its
	// default; negative: none).
	ClockLead time.Duration
	// Talkers is the share of members who talk (0: all, the worst case;
	// 0.25: one in four, the others present and silent).
	Talkers float64
	// World is the simulated side (nil: a LocalWorld in this process, whose
	// CPU then counts as the bot's). Run closes it.
	World World
	// Logger receives the run's progress (nil: discard). The service logs
	// only warnings and errors to it.
	Logger *slog.Logger
}

// Report is what a run measured.
type Report struct {
	Sessions, Members int
	Duration          time.Duration
	// ReplyFrames are the bot's reply frames handed to the connections
	// (banter_voice_frames_sent_total).
	ReplyFrames uint64
	// SlotsSkipped counts reply slots with no audio ready (TTS underrun
	// between sentences, or a stall).
	SlotsSkipped uint64
	// Sent, Late2ms and Late5ms are read from the one late-frame metric,
	// banter_voice_send_lateness_seconds: every packet the bot's
	// connections sent (reply and silence frames), and those handed to the
	// kernel more than 2 ms and 5 ms after their slot (measured where the
	// frame is sent, on either path: the pacer of each connection or the
	// send clock). TransportSkipped is the connections' skipped slots.
	Sent, Late2ms, Late5ms, TransportSkipped uint64
	// BaselineFrames and BaselineLate are a bare pacer (discord/voice/pace,
	// the transport's own, with its 1 ms spin) ticking every 20 ms in the same
	// process during the talking phase, doing nothing else: what the machine
	// allows at all. Late is > 5 ms after the slot, skipped slots included.
	BaselineFrames, BaselineLate uint64
	// Turns by outcome (spoken, skipped, denied, deferred, failed, ...).
	Turns map[string]uint64
	// MemberFramesPlayed counts what the simulated members said.
	MemberFramesPlayed uint64
	// HeapPerSession is the growth of this process's live heap from before
	// the sessions to while they run, divided by Sessions; with a LocalWorld
	// it includes the simulators and members.
	HeapPerSession uint64
	// CPUCores is this process's CPU time over the talking phase divided by
	// its duration: the bot and the bare pacer, and with a LocalWorld the
	// simulated world too.
	CPUCores float64
	// WorldCPUCores is the world process's (zero with a LocalWorld), and
	// WorldSched its CPU priority (Priority.String).
	WorldCPUCores float64
	WorldSched    string
	// WorldHealth is TalkResult.Health: the members' plays' on-time
	// duration over the time they took, 1 when the world kept time (a
	// starved world is below 1, and then the bot heard less than planned).
	WorldHealth float64
	// Clock is the send clock's counters over the run (Params.Clock).
	Clock *dvoice.ClockStats
	// Talking is the number of members who talk.
	Talking int
}

// LateRatio is Late5ms / Sent: the share of the bot's frames sent more than
// 5 ms after their slot.
func (r Report) LateRatio() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.Late5ms) / float64(r.Sent)
}

// BaselineLateRatio is BaselineLate / BaselineFrames.
func (r Report) BaselineLateRatio() float64 {
	if r.BaselineFrames == 0 {
		return 0
	}
	return float64(r.BaselineLate) / float64(r.BaselineFrames)
}

// String renders the report.
func (r Report) String() string {
	clk := ""
	if c := r.Clock; c != nil {
		sec := r.Duration.Seconds()
		clk = fmt.Sprintf(" clock_frames=%d clock_skipped=%d clock_dropped=%d wakeups_per_s=%.0f writes_per_s=%.0f frames_per_write=%.1f max_batch=%d",
			c.Frames, c.Skipped, c.Dropped, float64(c.Wakeups)/sec, float64(c.Writes)/sec, float64(c.Frames)/max(1, float64(c.Writes)), c.MaxBatch)
	}
	world := "world=in-process"
	if r.WorldCPUCores > 0 {
		world = fmt.Sprintf("world=process world_sched=%s world_cpu_cores=%.2f", r.WorldSched, r.WorldCPUCores)
	}
	return fmt.Sprintf("talking=%d/%d ", r.Talking, r.Sessions*r.Members) + fmt.Sprintf("sessions=%d members=%d duration=%v sent=%d late_5ms=%d late=%.3f%% baseline_pacer_late=%.3f%% (%d/%d) late_2ms=%.3f%% reply_frames=%d slots_skipped=%d transport_skipped=%d turns=%v member_frames=%d heap_per_session=%.1fKiB cpu_cores=%.2f %s world_health=%.4f",
		r.Sessions, r.Members, r.Duration, r.Sent, r.Late5ms, 100*r.LateRatio(), 100*r.BaselineLateRatio(), r.BaselineLate, r.BaselineFrames,
		100*float64(r.Late2ms)/max(1, float64(r.Sent)), r.ReplyFrames, r.SlotsSkipped, r.TransportSkipped, r.Turns,
		r.MemberFramesPlayed, float64(r.HeapPerSession)/1024, r.CPUCores, world, r.WorldHealth) + clk
}

// Run performs one capacity run: the bot (voice.Service with its send clock)
// in this process, the simulated world in p.World (a LocalWorld in this
// process when nil), and a bare pacer beside the bot as the same-run
// baseline. Run closes the world.
func Run(ctx context.Context, p Params) (rep Report, err error) {
	if p.Sessions <= 0 || p.Duration <= 0 || len(p.Clip) == 0 {
		return rep, errors.New("capacity: Sessions, Duration and Clip are required")
	}
	if p.Members <= 0 {
		p.Members = 2
	}
	if p.GCPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(p.GCPercent))
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	world := p.World
	if world == nil {
		world = &LocalWorld{}
	}
	defer func() { err = errors.Join(err, world.Close()) }()
	heap0 := liveHeap()
	info, err := world.Setup(ctx, WorldSetup{Sessions: p.Sessions, Members: p.Members, Clip: p.Clip, MembersHear: p.MembersHear})
	if err != nil {
		return rep, err
	}
	b, err := startBot(ctx, p, info, log)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, b.close()) }()
	log.Info("capacity: sessions up", "sessions", p.Sessions)

	cpu0, start, late0 := cpuTime(), time.Now(), latenessNow(b.reg)
	var clock0 dvoice.ClockStats
	if b.clock != nil {
		clock0 = b.clock.Stats()
	}
	var wg sync.WaitGroup
	var baseFrames, baseLate uint64
	tctx, cancel := context.WithTimeout(ctx, p.Duration)
	defer cancel()
	wg.Go(func() { baseFrames, baseLate = barePacer(tctx) })
	var talked TalkResult
	var talkErr error
	wg.Go(func() { talked, talkErr = world.Talk(ctx, TalkPlan{Duration: p.Duration, Talkers: p.Talkers}) })
	sleep(ctx, p.Duration/2)
	heap1 := liveHeap()
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	if talkErr != nil {
		return rep, talkErr
	}
	sleep(ctx, 3*time.Second) // replies in progress finish

	rep = Report{BaselineFrames: baseFrames, BaselineLate: baseLate, Sessions: p.Sessions, Members: p.Members, Duration: elapsed,
		MemberFramesPlayed: talked.MemberFrames, CPUCores: cpu.Seconds() / elapsed.Seconds(), Turns: map[string]uint64{},
		Talking: talked.Talking, WorldHealth: talked.Health(), WorldSched: info.Sched}
	if info.Pid != os.Getpid() {
		rep.WorldCPUCores = talked.CPUCores
	}
	if b.clock != nil {
		st := b.clock.Stats()
		st.Wakeups -= clock0.Wakeups
		st.Writes -= clock0.Writes
		st.Frames -= clock0.Frames
		st.Skipped -= clock0.Skipped
		st.Dropped -= clock0.Dropped
		rep.Clock = &st
	}
	if heap1 > heap0 {
		rep.HeapPerSession = (heap1 - heap0) / uint64(p.Sessions)
	}
	return rep, readMetrics(b.reg, late0, &rep)
}

// barePacer ticks a bare pacer (discord/voice/pace, with the transport's
// 1 ms spin) every 20 ms until ctx ends and returns the slots and those
// more than 5 ms late (skipped slots included).
func barePacer(ctx context.Context) (frames, late uint64) {
	pc := pace.New(pcm.FrameDuration)
	pc.Spin = time.Millisecond
	for {
		slot, err := pc.Wait(ctx)
		if err != nil {
			return frames, late
		}
		frames += uint64(1 + slot.Skipped)
		late += uint64(slot.Skipped)
		if slot.Lateness > 5*time.Millisecond {
			late++
		}
	}
}

// bot is the bot's side of a run.
type bot struct {
	sess  *discordgo.Session
	clock *dvoice.SendClock
	svc   *voice.Service
	reg   *prometheus.Registry
}

// startBot connects the bot to the world and joins it to every session's
// voice channel.
func startBot(ctx context.Context, p Params, info WorldInfo, log *slog.Logger) (b *bot, err error) {
	cfg := config.Default()
	cfg.Voice.JoinGreetingWindowSeconds = 0
	cfg.Voice.BargeIn.Policy = "none" // the bot finishes its answers: the most outgoing audio
	cfg.Voice.InactivityLeaveSeconds = 3600
	cfg.Secrets.OpenAIAPIKey = "sk-bench"
	b = &bot{reg: prometheus.NewRegistry()}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.close())
		}
	}()
	client, err := llm.New(llm.Options{BaseURL: info.OpenAI, APIKey: "sk-bench", MaxRetries: 1,
		Timeout: 10 * time.Second, FirstByteTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second, Logger: log})
	if err != nil {
		return b, err
	}
	if b.sess, err = discord.NewSession(discord.SessionOptions{Token: info.Token, APIURL: info.DiscordAPI}); err != nil {
		return b, err
	}
	b.sess.LogLevel = -1
	var ready sync.WaitGroup
	ready.Add(len(info.Guilds))
	var once sync.Map
	b.sess.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
		if _, dup := once.LoadOrStore(g.ID, true); !dup {
			ready.Done()
		}
	})
	if err := b.sess.Open(); err != nil {
		return b, err
	}
	ready.Wait()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(info.VoiceCA)
	if p.Clock {
		if b.clock, err = dvoice.NewSendClock(dvoice.ClockOptions{SharedSocket: p.SharedSocket, Lead: p.ClockLead, LocalAddr: "127.0.0.1:0", Logger: log}); err != nil {
			return b, err
		}
	}
	engine := decision.NewVoiceEngine(voice.Policy(cfg), decision.EngineOptions{Classifier: decision.ClassifierFunc(client.Classify)})
	b.svc, err = voice.New(voice.Options{Config: func() *config.Config { return cfg }, Discord: b.sess, LLM: client,
		Engine: engine, VoiceTLS: &tls.Config{RootCAs: pool}, Logger: log, Metrics: voice.NewMetrics(b.reg),
		TransportMetrics: dvoice.NewMetrics(b.reg), SendRealtimePriority: p.RealtimePriority, SendSpin: p.SendSpin, SendClock: b.clock})
	if err != nil {
		return b, err
	}
	for _, g := range info.Guilds {
		if err := b.svc.Join(ctx, g.ID, g.Voice); err != nil {
			return b, err
		}
	}
	return b, nil
}

// close shuts the service down, then the clock and the gateway session.
func (b *bot) close() error {
	var err error
	if b.svc != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = b.svc.Shutdown(sctx)
	}
	if b.clock != nil {
		b.clock.Close()
	}
	if b.sess != nil {
		err = errors.Join(err, b.sess.Close())
	}
	return err
}

// readMetrics fills rep's figures from the bot's metrics (lateness against
// late0, read when the talking phase began).
func readMetrics(reg *prometheus.Registry, late0 lateness, rep *Report) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "banter_voice_frames_sent_total":
				rep.ReplyFrames = uint64(m.GetCounter().GetValue())
			case "banter_voice_frame_slots_skipped_total":
				rep.SlotsSkipped = uint64(m.GetCounter().GetValue())
			case "banter_voice_send_lateness_seconds":
				h := m.GetHistogram()
				rep.Sent = h.GetSampleCount() - late0.count
				rep.Late2ms = rep.Sent - (bucket(h, 0.002) - late0.le2)
				rep.Late5ms = rep.Sent - (bucket(h, 0.005) - late0.le5)
			case "banter_voice_send_skipped_slots_total":
				rep.TransportSkipped = uint64(m.GetCounter().GetValue())
			case "banter_voice_turns_total":
				rep.Turns[label(m, "outcome")] = uint64(m.GetCounter().GetValue())
			}
		}
	}
	return nil
}

// lateness is the lateness histogram's count and its 2 ms and 5 ms buckets.
type lateness struct{ count, le2, le5 uint64 }

// latenessNow reads the lateness histogram from reg (zero before any packet).
func latenessNow(reg *prometheus.Registry) lateness {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "banter_voice_send_lateness_seconds" && len(mf.GetMetric()) == 1 {
			h := mf.GetMetric()[0].GetHistogram()
			return lateness{h.GetSampleCount(), bucket(h, 0.002), bucket(h, 0.005)}
		}
	}
	return lateness{}
}

// bucket returns h's cumulative count at upper bound le.
func bucket(h *dto.Histogram, le float64) uint64 {
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReadClip reads a WAV file for Params.Clip.
func ReadClip(path string) ([]byte, error) { return os.ReadFile(path) }
