package resample

import "math"

// Filter design: one windowed-sinc (Kaiser) low-pass prototype at the
// up-sampled rate in·L, split into L polyphase branches.
//
// Band edges are relative to the lower of the two rates, min = min(in, out):
// the passband runs to 0.4·min (80 % of the lower Nyquist frequency, 6.4 kHz
// for 16 kHz output) and the stopband starts at 0.6·min. Content between
// 0.5·min and 0.6·min can alias only into the band above 0.4·min, outside
// the passband, so the narrow filter is enough for speech while keeping the
// taps few (65 for 48→16 kHz, 44 per phase for 24→48 kHz).
const (
	passEdge      = 0.4  // × min rate
	stopEdge      = 0.6  // × min rate
	attenuationDB = 80.0 // stopband attenuation target
)

// design returns the polyphase coefficients for up-sampling by l and
// down-sampling by m with per-phase length k. Row p (coef[p*k:(p+1)*k]) holds
// branch p reversed, so output = Σ coef[p*k+u]·x[i-k+1+u].
func design(inRate, outRate, l int) (coef []float32, k int) {
	fs := float64(inRate) * float64(l) // prototype sample rate
	lo := float64(min(inRate, outRate))
	dw := 2 * math.Pi * (stopEdge - passEdge) * lo / fs // transition, rad/sample
	beta := 0.1102 * (attenuationDB - 8.7)
	n := int(math.Ceil((attenuationDB-8)/(2.285*dw))) + 1
	k = (n + l - 1) / l
	n = k * l
	fc := 0.5 * (passEdge + stopEdge) * lo / fs // cutoff, cycles/sample
	h := make([]float64, n)
	mid := float64(n-1) / 2
	var sum float64
	for i := range n {
		x := float64(i) - mid
		v := 2 * fc
		if x != 0 {
			v = math.Sin(2*math.Pi*fc*x) / (math.Pi * x)
		}
		r := 2*float64(i)/float64(n-1) - 1
		v *= bessel0(beta*math.Sqrt(max(0, 1-r*r))) / bessel0(beta)
		h[i] = v
		sum += v
	}
	gain := float64(l) / sum // unity DC gain after zero-stuffing by l
	coef = make([]float32, n)
	for p := range l {
		for j := range k {
			coef[p*k+(k-1-j)] = float32(h[p+j*l] * gain)
		}
	}
	return coef, k
}

// bessel0 is the zeroth-order modified Bessel function of the first kind.
func bessel0(x float64) float64 {
	sum, term := 1.0, 1.0
	for i := 1; i < 64; i++ {
		term *= (x / (2 * float64(i))) * (x / (2 * float64(i)))
		sum += term
		if term < sum*1e-12 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
