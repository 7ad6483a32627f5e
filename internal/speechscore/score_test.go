package speechscore

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScore: a signal scores perfectly against itself, also delayed (the
// alignment finds the lag), and noise or a lost band raise the LSD and
// lower the SNR.
func TestScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := make([]float64, Rate) // 1 s of a two-tone signal with a noisy envelope
	for i := range ref {
		env := 0.3 + 0.2*math.Sin(2*math.Pi*3*float64(i)/Rate)
		ref[i] = env * (0.6*math.Sin(2*math.Pi*440*float64(i)/Rate) + 0.3*math.Sin(2*math.Pi*5000*float64(i)/Rate) + 0.05*rng.NormFloat64())
	}
	lsd, snr := Score(ref, ref)
	if lsd > 1e-9 || snr != 35 {
		t.Errorf("identical: LSD %v, SNR %v; want 0, 35 (the clamp)", lsd, snr)
	}
	delayed := append(make([]float64, 123), ref...)
	if lsd, snr := Score(ref, delayed); lsd > 1e-9 || snr != 35 {
		t.Errorf("delayed by 123 samples: LSD %v, SNR %v; want 0, 35", lsd, snr)
	}
	noisy := make([]float64, len(ref))
	for i := range noisy {
		noisy[i] = ref[i] + 0.02*rng.NormFloat64()
	}
	nLSD, nSNR := Score(ref, noisy)
	if nLSD < 0.5 || nSNR > 25 || nSNR < 5 {
		t.Errorf("noise 0.02: LSD %.2f dB, SNR %.1f dB; want LSD ≥ 0.5, SNR in 5..25", nLSD, nSNR)
	}
	low := make([]float64, len(ref)) // the 5 kHz tone gone
	for i := range low {
		env := 0.3 + 0.2*math.Sin(2*math.Pi*3*float64(i)/Rate)
		low[i] = ref[i] - env*0.3*math.Sin(2*math.Pi*5000*float64(i)/Rate)
	}
	if lLSD, _ := Score(ref, low); lLSD <= 0.5 {
		t.Errorf("band removed: LSD %.2f dB, want > 0.5", lLSD)
	}
	if m := Mono([]int16{16384, -16384, 16384, 16384}); len(m) != 2 || m[0] != 0 || m[1] != 0.5 {
		t.Errorf("Mono = %v", m)
	}
}
