package capacity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// World is the simulated side of a run, what a deployment has on other
// machines: the Discord simulator with its voice server, the members in the
// voice channels and the OpenAI simulator. The bot reaches it only through
// their sockets. LocalWorld runs it in this process; StartWorld in a child
// process at a lower CPU priority, off the bot's cores as far as the
// scheduler allows.
type World interface {
	// Setup starts the simulators, creates a guild with a voice channel and
	// its members per session and joins the members to the channels.
	Setup(ctx context.Context, s WorldSetup) (WorldInfo, error)
	// Talk runs the talking phase and returns when it is over.
	Talk(ctx context.Context, t TalkPlan) (TalkResult, error)
	// Close makes the members leave and stops the simulators.
	Close() error
}

// WorldSetup sizes a world.
type WorldSetup struct {
	Sessions, Members int
	// Clip is a 48 kHz stereo WAV the members say.
	Clip []byte
	// MembersHear: the members receive and decode what is said.
	MembersHear bool
}

// WorldInfo is what the bot needs to reach a world.
type WorldInfo struct {
	// DiscordAPI and Token: the Discord simulator's REST base URL and the
	// bot's token (the gateway URL comes from REST).
	DiscordAPI, Token string
	// VoiceCA is the voice server's CA certificate (PEM), for the voice
	// WebSocket's TLS.
	VoiceCA []byte
	// OpenAI is the OpenAI simulator's base URL.
	OpenAI string
	// Guilds are the sessions' guilds and voice channels, in order.
	Guilds []WorldGuild
	// Pid is the world's process.
	Pid int
	// Sched is its CPU priority (Priority.String), empty when left as it is.
	Sched string
}

// WorldGuild is one session's guild and voice channel.
type WorldGuild struct{ ID, Voice string }

// TalkPlan is the talking phase: each talking member says the clip, then
// is quiet for about as long (uniform 0.5-1.5 × the clip), so each talks
// about half the time; a member's pauses are drawn from a generator seeded
// with its index, the same in every run.
type TalkPlan struct {
	Duration time.Duration
	// Talkers is the share of members who talk (0: all; 0.25: one in four,
	// the others present and silent).
	Talkers float64
}

// TalkResult is what the world measured of a talking phase.
type TalkResult struct {
	// Talking is the number of members who talked.
	Talking int
	// MemberFrames counts the clip frames the members said in full plays.
	MemberFrames uint64
	// Scheduled and Took sum, over the members' finished plays, the time a
	// play takes on time (a frame interval a packet) and the time it took:
	// Scheduled/Took below 1 means the members' packets went out late, the
	// world was starved.
	Scheduled, Took time.Duration
	// CPUCores is the world process's CPU time over the phase divided by its
	// duration (in this process: the whole process, bot included).
	CPUCores float64
}

// Health is Scheduled/Took: 1 when the members said everything on time.
func (t TalkResult) Health() float64 {
	if t.Took <= 0 {
		return 0
	}
	return t.Scheduled.Seconds() / t.Took.Seconds()
}

// LocalWorld is a World in this process. The zero value is ready to use.
type LocalWorld struct {
	vs      *voicesim.Server
	ds      *discordsim.Server
	os      *openaisim.Server
	members []*voicesim.Member
	frames  [][]byte
}

// Setup implements World.
func (w *LocalWorld) Setup(ctx context.Context, s WorldSetup) (info WorldInfo, err error) {
	clip, f, err := wav.Decode(nil, s.Clip)
	if err != nil || f != pcm.Discord() {
		return info, fmt.Errorf("capacity: clip must be 48 kHz stereo WAV: %v %w", f, err)
	}
	if w.frames, err = voicesim.EncodePCM(clip); err != nil {
		return info, fmt.Errorf("capacity: encode clip: %w", err)
	}
	if w.vs, err = voicesim.New(voicesim.Options{}); err != nil {
		return info, fmt.Errorf("capacity: voice simulator: %w", err)
	}
	w.ds = discordsim.New(discordsim.WithVoiceSim(w.vs))
	if err := w.ds.Start("127.0.0.1:0"); err != nil {
		return info, fmt.Errorf("capacity: discord simulator: %w", err)
	}
	w.os, err = openaisim.Start("127.0.0.1:0", openaisim.WithRules(append(openaisim.SaidRules("said", "hey banter, tell me something nice"),
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
			Reply: openaisim.Reply{Text: "Sure. The sun is out and the tea is warm."}})...))
	if err != nil {
		return info, fmt.Errorf("capacity: openai simulator: %w", err)
	}
	info = WorldInfo{DiscordAPI: w.ds.APIBaseURL(), Token: w.ds.Token(), VoiceCA: w.vs.CACertPEM(), OpenAI: w.os.BaseURL(), Pid: os.Getpid()}
	for i := range s.Sessions {
		g := w.ds.CreateGuild(fmt.Sprintf("g%d", i))
		vc := w.ds.CreateVoiceChannel(g, "voice")
		info.Guilds = append(info.Guilds, WorldGuild{ID: string(g), Voice: string(vc)})
		for j := range s.Members {
			u := w.ds.CreateUser(fmt.Sprintf("m%d-%d", i, j))
			if err := w.ds.AddMember(g, u); err != nil {
				return info, fmt.Errorf("capacity: add member: %w", err)
			}
			m, err := w.ds.JoinVoiceMember(ctx, u, vc, voicesim.MemberOptions{Deaf: !s.MembersHear})
			if err != nil {
				return info, fmt.Errorf("capacity: join member: %w", err)
			}
			w.members = append(w.members, m)
		}
	}
	return info, nil
}

// Talk implements World.
func (w *LocalWorld) Talk(ctx context.Context, t TalkPlan) (TalkResult, error) {
	if len(w.members) == 0 {
		return TalkResult{}, errors.New("capacity: talk before setup")
	}
	tctx, cancel := context.WithTimeout(ctx, t.Duration)
	defer cancel()
	clipLen := time.Duration(len(w.frames)) * pcm.FrameDuration
	onTime := time.Duration(len(w.frames)+voicesim.TrailingSilenceFrames-1) * pcm.FrameDuration
	var mu sync.Mutex
	var res TalkResult
	var wg sync.WaitGroup
	cpu0, start := cpuTime(), time.Now()
	for i, m := range w.members {
		if t.Talkers > 0 && float64(res.Talking) >= t.Talkers*float64(i+1) {
			continue // silent: present, sends nothing (a client's own VAD)
		}
		res.Talking++
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			sleep(tctx, time.Duration(rng.Int64N(int64(2*clipLen))))
			for tctx.Err() == nil {
				t0 := time.Now()
				if m.PlayOpus(tctx, w.frames) == nil {
					took := time.Since(t0)
					mu.Lock()
					res.MemberFrames += uint64(len(w.frames))
					res.Scheduled += onTime
					res.Took += took
					mu.Unlock()
				}
				sleep(tctx, clipLen/2+time.Duration(rng.Int64N(int64(clipLen))))
			}
		})
	}
	wg.Wait()
	res.CPUCores = (cpuTime() - cpu0).Seconds() / time.Since(start).Seconds()
	return res, nil
}

// Close implements World.
func (w *LocalWorld) Close() error {
	for _, m := range w.members {
		m.Leave()
	}
	w.members = nil
	var err error
	if w.os != nil {
		err = w.os.Close()
	}
	if w.ds != nil {
		w.ds.Close()
	}
	if w.vs != nil {
		err = errors.Join(err, w.vs.Close())
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
