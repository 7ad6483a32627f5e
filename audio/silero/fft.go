package silero

import "math/bits"

// bitrev8 reverses the 8 bits of i: the input order of the radix-2 FFT of 256 points.
func bitrev8(i uint8) uint8 { return bits.Reverse8(i) }

// fft256 transforms x, given in bit-reversed order, in place (iterative radix-2
// decimation in time); tw holds exp(-2πik/256) for k < 128.
func fft256(x []complex64, tw *[fftN / 2]complex64) {
	x = x[:fftN]
	for size := 2; size <= fftN; size <<= 1 {
		half := size >> 1
		step := fftN / size
		for start := 0; start < fftN; start += size {
			for j := range half {
				w := tw[j*step]
				a := x[start+j]
				b := x[start+j+half] * w
				x[start+j] = a + b
				x[start+j+half] = a - b
			}
		}
	}
}
