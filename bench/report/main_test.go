package main

import (
	"math"
	"testing"
	"time"

	"github.com/banterbot/banter/bench/voice/capacity"
)

// TestParseBench reads the lines `go test -bench -benchmem` prints, custom metrics included,
// and ignores everything else.
func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkTextStageA-2   	 1000000	      1043 ns/op	       812.0 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkPairedDecode-2 	    3000	     61234 ns/op	     30512 banter-ns/frame	     30990 libopus-ns/frame	         0.9846 banter/libopus	      96 B/op	       0 allocs/op
BenchmarkTimeToFirstAudio 	      10	         0 ns/op	         7.600 overhead-ms-median
--- FAIL: BenchmarkBroken
PASS
`)
	res := parseBench(out)
	for _, c := range []struct {
		name, unit string
		want       float64
	}{
		{"BenchmarkTextStageA", "ns/op", 1043},
		{"BenchmarkTextStageA", "allocs/op", 0},
		{"BenchmarkPairedDecode", "libopus-ns/frame", 30990},
		{"BenchmarkPairedDecode", "banter/libopus", 0.9846},
		{"BenchmarkTimeToFirstAudio", "overhead-ms-median", 7.6},
	} {
		v, ok := res[c.name][c.unit]
		if !ok || v != c.want {
			t.Errorf("%s %s = %v (%v), want %v", c.name, c.unit, v, ok, c.want)
		}
	}
	if len(res) != 3 {
		t.Errorf("parsed %d benchmarks, want 3: %v", len(res), res)
	}
}

// TestParseCapacityReadsBenchVoice: the report reads the line bench/voice prints, rendered by
// capacity.Report itself (so a change of that line fails here, not in a `make bench` run).
func TestParseCapacityReadsBenchVoice(t *testing.T) {
	rep := capacity.Report{Sessions: 50, Members: 2, Talking: 100, Duration: 30 * time.Second,
		Sent: 54653, Late5ms: 64, BaselineLate: 6, BaselineFrames: 1501, CPUCores: 0.37}
	c, ok := parseCapacity("some log line\n" + rep.String() + "\nPASS\n")
	if !ok {
		t.Fatalf("the report did not read %q", rep.String())
	}
	if c.sent != "54653" || c.late != "64" || c.baseLate != "6" || c.baseFrames != "1501" || c.cpu != "0.37" {
		t.Errorf("read %+v", c)
	}
	if math.Abs(c.latePct-0.117) > 0.001 || math.Abs(c.basePct-0.400) > 0.001 {
		t.Errorf("late %v %%, baseline %v %%; want 0.117 and 0.400", c.latePct, c.basePct)
	}
	if c.worldCPU != "" {
		t.Errorf("world CPU %q read from an in-process run", c.worldCPU)
	}
	rep.WorldCPUCores, rep.WorldSched, rep.WorldHealth = 0.81, "idle", 0.9991
	if c, ok = parseCapacity(rep.String()); !ok || c.cpu != "0.37" || c.worldCPU != "0.81" || c.worldHealth != "0.9991" {
		t.Errorf("world process run: read %+v from %q", c, rep.String())
	}
	if _, ok := parseCapacity("talking=1/2 sessions=1\n"); ok {
		t.Error("a line without the figures was read")
	}
}

// TestRealtimeRow: the realtime row reads both providers' sub-benchmarks of one run and gives
// Gemini's time to first audio as a ratio of OpenAI's.
func TestRealtimeRow(t *testing.T) {
	res := parseBench([]byte(`BenchmarkTimeToFirstAudio/openai-2         	      10	         0 ns/op	       206.0 bare-ms-median	         1.500 overhead-ms-median	       208.0 ttfa-ms-median
BenchmarkTimeToFirstAudio/gemini-2         	      10	         0 ns/op	       209.0 bare-ms-median	         0.8000 overhead-ms-median	       210.0 ttfa-ms-median
`))
	r := realtimeRow(res, "what", "src")
	if r.banter != "Gemini 210.0 ms (own overhead 0.80 ms)" || r.baseline != "OpenAI 208.0 ms (own overhead 1.50 ms)" || r.ratio != "1.01×" {
		t.Errorf("row %+v", r)
	}
}
