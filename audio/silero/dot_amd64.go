package silero

import "golang.org/x/sys/cpu"

// hasFMA: the CPU runs dotFMA (AVX2 and FMA3). A property of the machine, fixed at start.
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotFMA(a, b *float32, n int) float32

// dot returns the inner product of a and b[:len(a)].
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	if hasFMA && len(a) > 0 {
		return dotFMA(&a[0], &b[0], len(a))
	}
	return dotGo(a, b)
}
