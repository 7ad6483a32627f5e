package openaitest

import "time"

// Provider latencies the voice benchmarks inject on the critical path of a turn (voice's
// BenchmarkSpeculative and its end-to-end benchmarks, cmd/banter's real-voice pause sweep), so
// their figures compare: speech to text, the first token of a generation, the first byte of
// speech.
const (
	BenchSTTLatency  = 150 * time.Millisecond
	BenchTTFTLatency = 200 * time.Millisecond
	BenchTTSLatency  = 120 * time.Millisecond
)
