package pcm

import "math"

// FloorDB is the level EnergyDB reports for digital silence.
const FloorDB = -120.0

// EnergyDB returns the RMS level of s in dBFS (0 dB is a full-scale square
// wave), FloorDB for silence or an empty slice.
func EnergyDB(s []int16) float64 {
	if len(s) == 0 {
		return FloorDB
	}
	var sum int64
	for _, v := range s {
		sum += int64(v) * int64(v)
	}
	if sum == 0 {
		return FloorDB
	}
	ms := float64(sum) / float64(len(s)) / (32768.0 * 32768.0)
	return max(10*math.Log10(ms), FloorDB)
}

// ZeroCrossingRate returns the fraction of adjacent sample pairs in mono s
// whose signs differ (0..1). Voiced speech sits low (< ~0.15 at 16 kHz),
// fricatives and broadband noise high.
func ZeroCrossingRate(s []int16) float64 {
	if len(s) < 2 {
		return 0
	}
	n := 0
	for i := 1; i < len(s); i++ {
		if (s[i-1] < 0) != (s[i] < 0) {
			n++
		}
	}
	return float64(n) / float64(len(s)-1)
}

// Peak returns the largest absolute sample value in s.
func Peak(s []int16) int {
	p := 0
	for _, v := range s {
		a := int(v)
		if a < 0 {
			a = -a
		}
		p = max(p, a)
	}
	return p
}

// SNR returns the signal-to-noise ratio in dB of got against reference want
// (compared over the common length): 10·log10(Σwant² / Σ(want−got)²).
// Identical signals return +Inf.
func SNR(want, got []int16) float64 {
	n := min(len(want), len(got))
	var sig, noise float64
	for i := range n {
		w := float64(want[i])
		d := w - float64(got[i])
		sig += w * w
		noise += d * d
	}
	if noise == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(sig/noise)
}
