// Command report runs banter's headline benchmarks in one go and prints one table, each row
// a figure of banter's next to a baseline measured in the same run and their ratio, with the
// machine noted. `make bench` runs it and writes the table to bench/REPORT.md.
//
//	go run ./bench/report [-o bench/REPORT.md] [-sessions 50] [-duration 30s] [-quick]
//
// Rows (and where each comes from):
//   - Stage A ns/op and allocs (decision: BenchmarkTextStageA, BenchmarkVoiceStageA) vs a naive
//     word matcher (BenchmarkBaselineNaive);
//   - text message→send overhead (text: BenchmarkMessageToSend) vs a minimal bot doing only
//     the same model call and post;
//   - voice time-to-first-audio overhead (voice: BenchmarkTimeToFirstAudio) vs the bare
//     provider calls made back to back;
//   - realtime voice time to first audio on Gemini Live vs OpenAI Realtime, the same latency
//     injected on both (voice/realtime: BenchmarkTimeToFirstAudio/gemini, /openai);
//   - capacity: late reply frames at N sessions (bench/voice) vs a bare pacer in the same
//     process;
//   - DAVE encrypt+decrypt per frame (discord/dave: BenchmarkOpusFrameVsDavey) vs davey;
//   - Opus encode/decode (audio/opus: BenchmarkPairedEncode/Decode) vs bare libopus.
//
// A step that fails (e.g. no interop/node_modules for davey) becomes a row saying so; the
// others still run.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/banterbot/banter/audio/opus"
)

func main() {
	out := flag.String("o", "", "also write the table to this file (Markdown)")
	sessions := flag.Int("sessions", 50, "capacity run: concurrent voice sessions")
	duration := flag.Duration("duration", 30*time.Second, "capacity run: talking phase")
	quick := flag.Bool("quick", false, "fewer iterations everywhere (a smoke run, noisier figures)")
	flag.Parse()
	ctx := context.Background()
	r := &runner{quick: *quick, log: os.Stderr}
	start := time.Now()
	load0 := loadAvg()
	rows := []row{}
	rows = append(rows, r.stageA(ctx)...)
	rows = append(rows, r.textOverhead(ctx))
	rows = append(rows, r.voiceTTFA(ctx))
	rows = append(rows, r.realtimeTTFA(ctx))
	rows = append(rows, r.capacity(ctx, *sessions, *duration))
	rows = append(rows, r.dave(ctx))
	rows = append(rows, r.opus(ctx)...)
	table := render(rows, machine(start, load0))
	fmt.Print(table)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
	}
}

// row is one line of the report.
type row struct {
	what, banter, baseline, ratio, allocs, source string
}

type runner struct {
	quick bool
	log   io.Writer
}

// benchResult maps a benchmark's name (without the -N suffix) to its unit → value pairs.
type benchResult map[string]map[string]float64

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseBench reads `go test -bench` output.
func parseBench(out []byte) benchResult {
	res := benchResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		vals := map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				vals[f[i+1]] = v
			}
		}
		res[m[1]] = vals
	}
	return res
}

// goBench runs benchmarks matching pattern in pkg and parses them.
func (r *runner) goBench(ctx context.Context, pkg, pattern, benchtime string, extra ...string) (benchResult, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", benchtime, "-count", "1"}, extra...)
	args = append(args, pkg)
	fmt.Fprintf(r.log, "report: go %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "go", args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	res := parseBench(buf.Bytes())
	if err != nil {
		return res, fmt.Errorf("go test %s: %w: %s", pkg, err, lastLines(buf.String(), 5))
	}
	return res, nil
}

func (r *runner) pick(full, quick string) string {
	if r.quick {
		return quick
	}
	return full
}

func failed(what, source string, err error) row {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	return row{what: what, banter: "not measured: " + msg, source: source}
}

func (r *runner) stageA(ctx context.Context) []row {
	src := "decision: BenchmarkTextStageA, BenchmarkVoiceStageA, BenchmarkBaselineNaive"
	res, err := r.goBench(ctx, "./decision", "^Benchmark(TextStageA|VoiceStageA|BaselineNaive)$", r.pick("1s", "100ms"))
	if err != nil {
		return []row{failed("Stage A", src, err)}
	}
	base := res["BenchmarkBaselineNaive"]
	var rows []row
	for _, n := range []struct{ name, what string }{{"BenchmarkTextStageA", "Stage A, text turn"}, {"BenchmarkVoiceStageA", "Stage A, voice transcript"}} {
		v := res[n.name]
		rows = append(rows, row{
			what:     n.what,
			banter:   fmt.Sprintf("%.0f ns/op", v["ns/op"]),
			baseline: fmt.Sprintf("naive word match %.0f ns/op", base["ns/op"]),
			ratio:    ratio(v["ns/op"], base["ns/op"]),
			allocs:   fmt.Sprintf("%.0f (naive %.0f)", v["allocs/op"], base["allocs/op"]),
			source:   src,
		})
	}
	return rows
}

func (r *runner) textOverhead(ctx context.Context) row {
	src := "text: BenchmarkMessageToSend (100 msg/s, 50 channels)"
	what := "text message → reply sent, median overhead"
	res, err := r.goBench(ctx, "./text", "^BenchmarkMessageToSend$", r.pick("500x", "100x"))
	if err != nil {
		return failed(what, src, err)
	}
	v := res["BenchmarkMessageToSend"]
	return row{what: what,
		banter:   fmt.Sprintf("%.2f ms (p99 %.2f ms)", v["overhead-median-ms"], v["overhead-p99-ms"]),
		baseline: fmt.Sprintf("minimal bot, same calls: %.2f ms", v["baseline-median-ms"]),
		ratio:    fmt.Sprintf("%.3g×", v["x-baseline"]),
		source:   src}
}

func (r *runner) voiceTTFA(ctx context.Context) row {
	src := "voice: BenchmarkTimeToFirstAudio (injected STT 150 + token 200 + TTS 120 ms)"
	what := "voice time to first audio, median overhead over injected latency"
	res, err := r.goBench(ctx, "./voice", "^BenchmarkTimeToFirstAudio$", r.pick("10x", "3x"))
	if err != nil {
		return failed(what, src, err)
	}
	v := res["BenchmarkTimeToFirstAudio"]
	return row{what: what,
		banter:   fmt.Sprintf("%.1f ms (TTFA %.1f ms)", v["overhead-ms-median"], v["ttfa-ms-median"]),
		baseline: fmt.Sprintf("bare provider calls: %.1f ms", v["bare-calls-overhead-ms-median"]),
		ratio:    ratio(v["overhead-ms-median"], v["bare-calls-overhead-ms-median"]),
		source:   src}
}

// realtimeTTFA compares the realtime providers' time to first audio in one run: a native reply
// from Respond to its first Opus frame, the model's first output injected 200 ms after the turn
// on both; each provider's overhead is its Responder minus its bare provider calls.
func (r *runner) realtimeTTFA(ctx context.Context) row {
	src := "voice/realtime: BenchmarkTimeToFirstAudio/gemini, /openai (first output injected at 200 ms on both)"
	what := "realtime time to first audio, Gemini Live vs OpenAI Realtime"
	res, err := r.goBench(ctx, "./voice/realtime", "^BenchmarkTimeToFirstAudio$", r.pick("10x", "3x"))
	if err != nil {
		return failed(what, src, err)
	}
	return realtimeRow(res, what, src)
}

// realtimeRow renders the providers' figures: Gemini's beside OpenAI's, their ratio.
func realtimeRow(res benchResult, what, src string) row {
	g, o := res["BenchmarkTimeToFirstAudio/gemini"], res["BenchmarkTimeToFirstAudio/openai"]
	return row{what: what,
		banter:   fmt.Sprintf("Gemini %.1f ms (own overhead %.2f ms)", g["ttfa-ms-median"], g["overhead-ms-median"]),
		baseline: fmt.Sprintf("OpenAI %.1f ms (own overhead %.2f ms)", o["ttfa-ms-median"], o["overhead-ms-median"]),
		ratio:    ratio(g["ttfa-ms-median"], o["ttfa-ms-median"]),
		source:   src}
}

var (
	lateRe     = regexp.MustCompile(`sent=(\d+) late_5ms=(\d+) late=([\d.]+)%`)
	baselineRe = regexp.MustCompile(`baseline_pacer_late=([\d.]+)% \((\d+)/(\d+)\)`)
	cpuRe      = regexp.MustCompile(`(?:^| )cpu_cores=([\d.]+)`)
	worldRe    = regexp.MustCompile(`world_cpu_cores=([\d.]+) world_health=([\d.]+)`)
)

func (r *runner) capacity(ctx context.Context, sessions int, d time.Duration) row {
	if r.quick {
		d = min(d, 10*time.Second)
	}
	src := fmt.Sprintf("go run ./bench/voice -sessions %d -duration %v", sessions, d)
	what := fmt.Sprintf("capacity: reply frames > 5 ms late at %d sessions", sessions)
	fmt.Fprintf(r.log, "report: %s\n", src)
	cmd := exec.CommandContext(ctx, "go", "run", "./bench/voice", "-sessions", strconv.Itoa(sessions), "-duration", d.String())
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, io.Discard
	if err := cmd.Run(); err != nil {
		return failed(what, src, fmt.Errorf("%w: %s", err, lastLines(buf.String(), 3)))
	}
	c, ok := parseCapacity(buf.String())
	if !ok {
		return failed(what, src, fmt.Errorf("unexpected output %q", lastLines(buf.String(), 2)))
	}
	cpu := ""
	if c.cpu != "" {
		cpu = ", " + c.cpu + " cores busy"
	}
	if c.worldCPU != "" {
		cpu += "; simulated world in its own process: " + c.worldCPU + " cores, health " + c.worldHealth
	}
	return row{what: what,
		banter:   fmt.Sprintf("%.3f %% (%s/%s frames%s)", c.latePct, c.late, c.sent, cpu),
		baseline: fmt.Sprintf("bare pacer, same process: %.3f %% (%s/%s)", c.basePct, c.baseLate, c.baseFrames),
		ratio:    ratio(c.latePct, c.basePct),
		source:   src}
}

// capacityLine is what the report reads of bench/voice's result line (capacity.Report.String).
type capacityLine struct {
	sent, late, baseLate, baseFrames, cpu string
	worldCPU, worldHealth                 string // the world process's CPU and health, when it had one
	latePct, basePct                      float64
}

// parseCapacity reads bench/voice's output; ok is false when its result line is not there.
func parseCapacity(out string) (c capacityLine, ok bool) {
	late, base := lateRe.FindStringSubmatch(out), baselineRe.FindStringSubmatch(out)
	if late == nil || base == nil {
		return c, false
	}
	c.sent, c.late, c.baseLate, c.baseFrames = late[1], late[2], base[2], base[3]
	c.latePct, _ = strconv.ParseFloat(late[3], 64)
	c.basePct, _ = strconv.ParseFloat(base[1], 64)
	if m := cpuRe.FindStringSubmatch(out); m != nil {
		c.cpu = m[1]
	}
	if m := worldRe.FindStringSubmatch(out); m != nil {
		c.worldCPU, c.worldHealth = m[1], m[2]
	}
	return c, true
}

func (r *runner) dave(ctx context.Context) row {
	src := "discord/dave: BenchmarkOpusFrameVsDavey (160-byte frame; davey timed inside node)"
	what := "DAVE encrypt + decrypt per Opus frame"
	res, err := r.goBench(ctx, "./discord/dave", "^BenchmarkOpusFrameVsDavey$", r.pick("20000x", "2000x"))
	if err != nil {
		return failed(what, src, err)
	}
	v := res["BenchmarkOpusFrameVsDavey"]
	return row{what: what,
		banter:   fmt.Sprintf("%.0f ns", v["banter-ns/frame"]),
		baseline: fmt.Sprintf("@snazzah/davey %.0f ns", v["davey-ns/frame"]),
		ratio:    ratio(v["banter-ns/frame"], v["davey-ns/frame"]),
		allocs:   fmt.Sprintf("%.0f", v["allocs/op"]),
		source:   src}
}

func (r *runner) opus(ctx context.Context) []row {
	src := "audio/opus: BenchmarkPairedEncode/Decode (alternating frame by frame, medians)"
	res, err := r.goBench(ctx, "./audio/opus", "^BenchmarkPaired(Encode|Decode)$", r.pick("3000x", "500x"))
	if err != nil {
		return []row{failed("Opus encode/decode", src, err)}
	}
	var rows []row
	for _, n := range []struct{ name, what string }{
		{"BenchmarkPairedEncode", "Opus encode, 20 ms 48 kHz stereo 64 kb/s"},
		{"BenchmarkPairedDecode", "Opus decode, 20 ms 48 kHz stereo"},
	} {
		v := res[n.name]
		rows = append(rows, row{what: n.what,
			banter:   fmt.Sprintf("%.1f µs", v["banter-ns/frame"]/1000),
			baseline: fmt.Sprintf("bare libopus %.1f µs", v["libopus-ns/frame"]/1000),
			ratio:    ratio(v["banter-ns/frame"], v["libopus-ns/frame"]),
			allocs:   fmt.Sprintf("%.0f", v["allocs/op"]),
			source:   src})
	}
	return rows
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3g×", a/b)
}

func render(rows []row, machine string) string {
	var b strings.Builder
	b.WriteString("# banter benchmark report\n\n")
	b.WriteString(machine)
	b.WriteString("\nEach ratio is banter ÷ the baseline measured in the same run (lower is better; for the\n")
	b.WriteString("capacity row, late-frame percentages).\n\n")
	b.WriteString("| measure | banter | same-run baseline | ratio | allocs/op | from |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.what, r.banter, r.baseline, r.ratio, r.allocs, r.source)
	}
	return b.String()
}

func machine(start time.Time, load0 string) string {
	cpu := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	goVersion := runtime.Version()
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		goVersion = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("Run %s, %s; %d CPUs (%s), %s/%s, %s, %s linked.\nLoad average at start %s, at end %s.\n",
		start.UTC().Format("2006-01-02 15:04 UTC"), time.Since(start).Round(time.Second), runtime.NumCPU(), cpu,
		runtime.GOOS, runtime.GOARCH, goVersion, opus.Version(), load0, loadAvg())
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
