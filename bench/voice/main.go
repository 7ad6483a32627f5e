// Command voice is the voice capacity benchmark: many concurrent voice
// sessions against the simulators, each with members talking about half the
// time and the bot answering. The full run (issue 24's acceptance size) is
//
//	go run ./bench/voice -sessions 200 -duration 60s [-talkers 0.25]
//
// which reports the share of the bot's reply frames sent more than 5 ms after
// their slot (target < 0.5 %) beside a bare pacer ticking in the bot's
// process, the bot's CPU and memory per session. As in a deployment, where
// the members and OpenAI are on other machines, the simulated world (the
// Discord simulator with its voice server, the members, the OpenAI
// simulator) runs in a child process, this binary again with a hidden
// flag, at the lowest CPU priority (the SCHED_IDLE class: it runs on what
// the bot leaves free and never delays a bot thread; -world-nice N puts it
// in the normal class at niceness N instead), and the bot reaches it over
// their sockets; its CPU and its health (did the members keep time) are
// reported apart. -in-process runs the world in the bot's
// process, the earlier bench. GOGC 400 and the sender spin off by default
// (docs/voice.md). The package test of bench/voice/capacity runs a small
// variant in CI time.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/banterbot/banter/bench/voice/capacity"
)

// worldFlag, as the first argument, makes this binary the world process
// (capacity.ServeWorld on its stdin and stdout).
const worldFlag = "-serve-world"

func main() {
	if len(os.Args) > 1 && os.Args[1] == worldFlag {
		os.Exit(serveWorld(os.Args[2:]))
	}
	sessions := flag.Int("sessions", 50, "concurrent voice sessions")
	members := flag.Int("members", 2, "members per session")
	duration := flag.Duration("duration", 60*time.Second, "talking phase")
	clip := flag.String("clip", "bench/voice/capacity/testdata/hey-banter-weather.wav", "48 kHz stereo WAV the members say")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run (the bot's process) to this file")
	spin := flag.Duration("spin", -1, "sender spin before each slot (0: transport default 1ms; negative: off)")
	hear := flag.Bool("hear", false, "simulated members receive and decode the audio (simulator CPU)")
	gogc := flag.Int("gogc", 400, "GOGC during the run (0: leave as is; Go's default is 100)")
	rt := flag.Int("rt", 0, "SCHED_FIFO priority for the reply sender (0: off; needs CAP_SYS_NICE)")
	clock := flag.Bool("clock", true, "send on one process-wide send clock (false: a pacer per connection, the earlier path)")
	lead := flag.Duration("lead", 0, "with -clock: how long before its slot a queued frame may leave (0: the clock's default, 2ms; negative: none)")
	shared := flag.Bool("shared", true, "with -clock: one UDP socket for all connections (batched sendmmsg)")
	talkers := flag.Float64("talkers", 0, "share of members who talk (0: everyone, the worst case; 0.25: one in four)")
	inProcess := flag.Bool("in-process", false, "run the simulated world in the bot's process (the earlier bench)")
	nice := flag.Int("world-nice", -1, "run the world process in the normal scheduling class at this niceness (negative: SCHED_IDLE)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b, err := capacity.ReadClip(*clip)
	if err != nil {
		fatal(err)
	}
	var world capacity.World
	if !*inProcess {
		exe, err := os.Executable()
		if err != nil {
			fatal(err)
		}
		cmd := exec.Command(exe, worldFlag, "-nice", strconv.Itoa(*nice))
		cmd.Stderr = os.Stderr
		if world, err = capacity.StartWorld(cmd); err != nil {
			fatal(err)
		}
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rep, err := capacity.Run(ctx, capacity.Params{Sessions: *sessions, Members: *members, Duration: *duration, Clip: b, Logger: log, RealtimePriority: *rt,
		SendSpin: *spin, MembersHear: *hear, GCPercent: *gogc, Clock: *clock, SharedSocket: *clock && *shared, ClockLead: *lead, Talkers: *talkers, World: world})
	fmt.Println(rep)
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
	case rep.LateRatio() >= 0.005:
		fmt.Println("FAIL: late frames ≥ 0.5 %")
	default:
		fmt.Println("PASS")
	}
}

// serveWorld is the world process: the simulators and members, driven by
// the parent over stdin and stdout.
func serveWorld(args []string) int {
	fs := flag.NewFlagSet(worldFlag, flag.ContinueOnError)
	nice := fs.Int("nice", -1, "niceness (negative: SCHED_IDLE)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	prio := capacity.Priority{Idle: *nice < 0, Nice: max(*nice, 0)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := capacity.ServeWorld(ctx, os.Stdin, os.Stdout, &capacity.LocalWorld{}, prio); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
