package main

import "testing"

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
