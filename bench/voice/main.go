// Command voice is the voice capacity benchmark: many concurrent voice
// sessions against the simulators, each with members talking about half the
// time and the bot answering. The full run (issue 9's acceptance size) is
//
//	go run ./bench/voice -sessions 50 -duration 60s
//
// (GOGC 400 and the sender spin off by default: see docs/voice.md).
//
// which reports the share of the bot's reply frames sent more than 5 ms after
// their slot (target < 0.5 %), CPU and memory per session. The package test
// of bench/voice/capacity runs a small variant in CI time.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"time"

	"github.com/banterbot/banter/bench/voice/capacity"
)

func main() {
	sessions := flag.Int("sessions", 50, "concurrent voice sessions")
	members := flag.Int("members", 2, "members per session")
	duration := flag.Duration("duration", 60*time.Second, "talking phase")
	clip := flag.String("clip", "bench/voice/capacity/testdata/hey-banter-weather.wav", "48 kHz stereo WAV the members say")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	spin := flag.Duration("spin", -1, "sender spin before each slot (0: transport default 1ms; negative: off)")
	hear := flag.Bool("hear", false, "simulated members receive and decode the audio (simulator CPU)")
	gogc := flag.Int("gogc", 400, "GOGC during the run (0: leave as is; Go's default is 100)")
	rt := flag.Int("rt", 0, "SCHED_FIFO priority for the reply sender (0: off; needs CAP_SYS_NICE)")
	clock := flag.Bool("clock", true, "send on one process-wide send clock (false: a pacer per connection, the earlier path)")
	shared := flag.Bool("shared", true, "with -clock: one UDP socket for all connections (batched sendmmsg)")
	talkers := flag.Float64("talkers", 0, "share of members who talk (0: everyone, the worst case; 0.25: one in four)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b, err := capacity.ReadClip(*clip)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rep, err := capacity.Run(ctx, capacity.Params{Sessions: *sessions, Members: *members, Duration: *duration, Clip: b, Logger: log, RealtimePriority: *rt,
		SendSpin: *spin, MembersHear: *hear, GCPercent: *gogc, Clock: *clock, SharedSocket: *clock && *shared, Talkers: *talkers})
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
