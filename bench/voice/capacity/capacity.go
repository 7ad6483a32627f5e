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
	"math/rand/v2"
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
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/discord/voice/pace"
	"github.com/banterbot/banter/llm"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
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
	// Talkers is the share of members who talk (0: all, the worst case;
	// 0.25: one in four, the others present and silent).
	Talkers float64
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
	// HeapPerSession is the growth of the live heap from before the
	// sessions to while they run, divided by Sessions; it includes the
	// simulated members' state.
	HeapPerSession uint64
	// CPUCores is the process CPU time over the talking phase divided by
	// its duration (simulators included).
	CPUCores float64
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
	return fmt.Sprintf("talking=%d/%d ", r.Talking, r.Sessions*r.Members) + fmt.Sprintf("sessions=%d members=%d duration=%v sent=%d late_5ms=%d late=%.3f%% baseline_pacer_late=%.3f%% (%d/%d) late_2ms=%.3f%% reply_frames=%d slots_skipped=%d transport_skipped=%d turns=%v member_frames=%d heap_per_session=%.1fKiB cpu_cores=%.2f",
		r.Sessions, r.Members, r.Duration, r.Sent, r.Late5ms, 100*r.LateRatio(), 100*r.BaselineLateRatio(), r.BaselineLate, r.BaselineFrames,
		100*float64(r.Late2ms)/max(1, float64(r.Sent)), r.ReplyFrames, r.SlotsSkipped, r.TransportSkipped, r.Turns,
		r.MemberFramesPlayed, float64(r.HeapPerSession)/1024, r.CPUCores) + clk
}

// Run performs one capacity run.
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
	clip, f, err := wav.Decode(nil, p.Clip)
	if err != nil || f != pcm.Discord() {
		return rep, fmt.Errorf("capacity: clip must be 48 kHz stereo WAV: %v %w", f, err)
	}
	frames, err := voicesim.EncodePCM(clip)
	if err != nil {
		return rep, fmt.Errorf("capacity: encode clip: %w", err)
	}
	clipLen := time.Duration(len(frames)) * pcm.FrameDuration

	vs, err := voicesim.New(voicesim.Options{})
	if err != nil {
		return rep, err
	}
	defer vs.Close()
	ds := discordsim.New(discordsim.WithVoiceSim(vs))
	if err := ds.Start("127.0.0.1:0"); err != nil {
		return rep, err
	}
	defer ds.Close()
	os1, err := openaisim.Start("127.0.0.1:0", openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointTranscriptions},
			Reply: openaisim.Reply{Transcript: "hey banter, tell me something nice"}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
			Reply: openaisim.Reply{Text: "Sure. The sun is out and the tea is warm."}}))
	if err != nil {
		return rep, err
	}
	defer os1.Close()

	type guild struct {
		id    discordsim.GuildID
		vc    discordsim.ChannelID
		users []discordsim.UserID
	}
	guilds := make([]guild, p.Sessions)
	for i := range guilds {
		g := ds.CreateGuild(fmt.Sprintf("g%d", i))
		guilds[i] = guild{id: g, vc: ds.CreateVoiceChannel(g, "voice")}
		for j := range p.Members {
			u := ds.CreateUser(fmt.Sprintf("m%d-%d", i, j))
			if err := ds.AddMember(g, u); err != nil {
				return rep, err
			}
			guilds[i].users = append(guilds[i].users, u)
		}
	}

	cfg := config.Default()
	cfg.Voice.JoinGreetingWindowSeconds = 0
	cfg.Voice.BargeIn.Policy = "none" // the bot finishes its answers: the most outgoing audio
	cfg.Voice.InactivityLeaveSeconds = 3600
	cfg.Secrets.OpenAIAPIKey = "sk-bench"
	reg := prometheus.NewRegistry()
	client, err := llm.New(llm.Options{BaseURL: os1.BaseURL(), APIKey: "sk-bench", MaxRetries: 1,
		Timeout: 10 * time.Second, FirstByteTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second, Logger: log})
	if err != nil {
		return rep, err
	}
	sess, err := discord.NewSession(discord.SessionOptions{Token: ds.Token(), APIURL: ds.APIBaseURL()})
	if err != nil {
		return rep, err
	}
	sess.LogLevel = -1
	var ready sync.WaitGroup
	ready.Add(p.Sessions)
	var once sync.Map
	sess.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
		if _, dup := once.LoadOrStore(g.ID, true); !dup {
			ready.Done()
		}
	})
	if err := sess.Open(); err != nil {
		return rep, err
	}
	defer sess.Close()
	ready.Wait()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(vs.CACertPEM())
	var clock *dvoice.SendClock
	if p.Clock {
		if clock, err = dvoice.NewSendClock(dvoice.ClockOptions{SharedSocket: p.SharedSocket, LocalAddr: "127.0.0.1:0", Logger: log}); err != nil {
			return rep, err
		}
		defer clock.Close()
	}
	engine := decision.NewVoiceEngine(voice.Policy(cfg), decision.EngineOptions{Classifier: decision.ClassifierFunc(client.Classify)})
	svc, err := voice.New(voice.Options{Config: func() *config.Config { return cfg }, Discord: sess, LLM: client,
		Engine: engine, VoiceTLS: &tls.Config{RootCAs: pool}, Logger: log, Metrics: voice.NewMetrics(reg),
		TransportMetrics: dvoice.NewMetrics(reg), SendRealtimePriority: p.RealtimePriority, SendSpin: p.SendSpin, SendClock: clock})
	if err != nil {
		return rep, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = errors.Join(err, svc.Shutdown(sctx))
	}()

	heap0 := liveHeap()
	var members []*voicesim.Member
	defer func() {
		for _, m := range members {
			m.Leave()
		}
	}()
	for _, g := range guilds {
		for _, u := range g.users {
			m, err := ds.JoinVoiceMember(ctx, u, g.vc, voicesim.MemberOptions{Deaf: !p.MembersHear})
			if err != nil {
				return rep, err
			}
			members = append(members, m)
		}
		if err := svc.Join(ctx, string(g.id), string(g.vc)); err != nil {
			return rep, err
		}
	}
	log.Info("capacity: sessions up", "sessions", p.Sessions)

	// Talking phase: each member says the clip, then is quiet for about as
	// long (uniform 0.5-1.5 × the clip), so each talks about half the time.
	tctx, cancel := context.WithTimeout(ctx, p.Duration)
	defer cancel()
	cpu0, start, late0 := cpuTime(), time.Now(), latenessNow(reg)
	var wg sync.WaitGroup
	var baseFrames, baseLate uint64
	wg.Go(func() {
		pc := pace.New(pcm.FrameDuration)
		pc.Spin = time.Millisecond
		for {
			slot, err := pc.Wait(tctx)
			if err != nil {
				return
			}
			baseFrames += uint64(1 + slot.Skipped)
			baseLate += uint64(slot.Skipped)
			if slot.Lateness > 5*time.Millisecond {
				baseLate++
			}
		}
	})
	var played sync.Mutex
	var memberFrames uint64
	var clock0 dvoice.ClockStats
	if clock != nil {
		clock0 = clock.Stats()
	}
	talking := 0
	for i, m := range members {
		if p.Talkers > 0 && float64(talking) >= p.Talkers*float64(i+1) {
			continue // silent: present, sends nothing (a client's own VAD)
		}
		talking++
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			time.Sleep(time.Duration(rng.Int64N(int64(2 * clipLen))))
			for tctx.Err() == nil {
				if m.PlayOpus(tctx, frames) == nil {
					played.Lock()
					memberFrames += uint64(len(frames))
					played.Unlock()
				}
				pause := clipLen/2 + time.Duration(rng.Int64N(int64(clipLen)))
				select {
				case <-tctx.Done():
				case <-time.After(pause):
				}
			}
		})
	}
	time.Sleep(p.Duration / 2)
	heap1 := liveHeap()
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	time.Sleep(3 * time.Second) // replies in progress finish

	rep = Report{BaselineFrames: baseFrames, BaselineLate: baseLate, Sessions: p.Sessions, Members: p.Members, Duration: elapsed, MemberFramesPlayed: memberFrames,
		CPUCores: cpu.Seconds() / elapsed.Seconds(), Turns: map[string]uint64{}, Talking: talking}
	if clock != nil {
		st := clock.Stats()
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
	mfs, err := reg.Gather()
	if err != nil {
		return rep, err
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
	return rep, nil
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
