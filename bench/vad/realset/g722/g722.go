// Package g722 decodes ITU-T G.722 (7 kHz audio coding within 64 kbit/s,
// sub-band ADPCM) at 64 kbit/s: one byte per pair of 16 kHz samples, the
// two high bits the higher sub-band's code and the six low bits the lower
// sub-band's, as Asterisk stores its .g722 sound files. Written for the
// real-audio evaluation set of bench/vad (asterisk-core-sounds and
// asterisk-moh-opsound ship their 16 kHz recordings in this form). Decoding
// only; the blocks are named as in the Recommendation (section 6).
package g722

// Rate is the output sample rate.
const Rate = 16000

// band is one sub-band's ADPCM state: the scale factor, the adaptive
// pole-zero predictor and its history.
type band struct {
	s   int    // predicted signal (PREDIC)
	sp  int    // pole part of the prediction
	sz  int    // zero part of the prediction
	r   [3]int // reconstructed signal history
	a   [3]int // pole coefficients a1, a2 (index 0 unused)
	b   [7]int // zero coefficients b1..b6 (index 0 unused)
	d   [7]int // quantized difference history
	p   [3]int // partial reconstructed signal history
	nb  int    // log scale factor
	det int    // scale factor
}

// Decoder holds the state of one G.722 stream.
type Decoder struct {
	low, high band
	x         [24]int // receive QMF history
}

// NewDecoder returns a decoder in the reset state.
func NewDecoder() *Decoder {
	d := &Decoder{}
	d.low.det = 32
	d.high.det = 8
	return d
}

// Decode appends two 16 kHz samples per input byte to dst.
func (d *Decoder) Decode(dst []int16, in []byte) []int16 {
	for _, code := range in {
		ilow := int(code & 0x3f)
		ihigh := int(code>>6) & 3

		// Lower sub-band: INVQBL with the 6-bit code reconstructs the
		// output; INVQAL with its 4 most significant bits drives adaptation.
		rlow := clamp(d.low.s+(d.low.det*qm6[ilow])>>15, -16384, 16383)
		il4 := ilow >> 2
		dlow := (d.low.det * qm4[il4]) >> 15
		d.low.nb = clamp((d.low.nb*127)>>7+wl[rl42[il4]], 0, 18432)
		d.low.det = scale(d.low.nb, 8)
		d.low.adapt(dlow)

		// Higher sub-band: 2-bit code.
		dhigh := (d.high.det * qm2[ihigh]) >> 15
		rhigh := clamp(d.high.s+dhigh, -16384, 16383)
		d.high.nb = clamp((d.high.nb*127)>>7+wh[rh2[ihigh]], 0, 22528)
		d.high.det = scale(d.high.nb, 10)
		d.high.adapt(dhigh)

		// Receive QMF: two output samples from the sum and difference.
		copy(d.x[:], d.x[2:])
		d.x[22] = rlow + rhigh
		d.x[23] = rlow - rhigh
		var x1, x2 int
		for i := range 12 {
			x2 += d.x[2*i] * qmfEven[i]
			x1 += d.x[2*i+1] * qmfOdd[i]
		}
		dst = append(dst, sat16(x1>>11), sat16(x2>>11))
	}
	return dst
}

// scale is SCALEL/SCALEH: the linear scale factor from the log one.
func scale(nb, shift int) int {
	v := ilb[(nb>>6)&31]
	if s := shift - nb>>11; s < 0 {
		v <<= -s
	} else {
		v >>= s
	}
	return v << 2
}

// adapt is block 4 for one sub-band given its quantized difference dq:
// RECONS, PARREC, UPPOL2, UPPOL1, UPZERO, DELAYA, FILTEP, FILTEZ, PREDIC.
func (b *band) adapt(dq int) {
	b.d[0] = dq
	b.r[0] = sat(b.s + dq)
	b.p[0] = sat(b.sz + dq)

	sign := func(v int) bool { return v < 0 }
	// UPPOL2
	wd1 := sat(b.a[1] << 2)
	wd2 := wd1
	if sign(b.p[0]) == sign(b.p[1]) {
		wd2 = -wd1
	}
	wd2 = min(wd2, 32767)
	ap2 := -128
	if sign(b.p[0]) == sign(b.p[2]) {
		ap2 = 128
	}
	ap2 += wd2 >> 7
	ap2 += (b.a[2] * 32512) >> 15
	ap2 = clamp(ap2, -12288, 12288)
	// UPPOL1
	ap1 := -192
	if sign(b.p[0]) == sign(b.p[1]) {
		ap1 = 192
	}
	ap1 = sat(ap1 + (b.a[1]*32640)>>15)
	lim := sat(15360 - ap2)
	ap1 = clamp(ap1, -lim, lim)
	// UPZERO
	step := 128
	if dq == 0 {
		step = 0
	}
	var bp [7]int
	for i := 1; i < 7; i++ {
		w := -step
		if sign(b.d[i]) == sign(dq) {
			w = step
		}
		bp[i] = sat(w + (b.b[i]*32640)>>15)
	}
	// DELAYA and FILTEZ
	sz := 0
	for i := 6; i > 0; i-- {
		b.d[i] = b.d[i-1]
		b.b[i] = bp[i]
		sz += (b.b[i] * sat(b.d[i]+b.d[i])) >> 15
	}
	b.sz = sz
	b.r[2], b.r[1] = b.r[1], b.r[0]
	b.p[2], b.p[1] = b.p[1], b.p[0]
	b.a[2], b.a[1] = ap2, ap1
	// FILTEP and PREDIC
	b.sp = sat((b.a[1]*sat(b.r[1]+b.r[1]))>>15 + (b.a[2]*sat(b.r[2]+b.r[2]))>>15)
	b.s = sat(b.sp + b.sz)
}

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }

func sat(v int) int { return clamp(v, -32768, 32767) }

func sat16(v int) int16 { return int16(sat(v)) }

// Tables of the Recommendation: the log scale factor adaptation (wl, wh),
// the code-to-index maps (rl42, rh2), the inverse quantizers of 6, 4 and 2
// bits (qm6, qm4, qm2), the scale factor's antilog (ilb) and the QMF.
var (
	wl   = [8]int{-60, -30, 58, 172, 334, 538, 1198, 3042}
	rl42 = [16]int{0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0}
	wh   = [3]int{0, -214, 798}
	rh2  = [4]int{2, 1, 2, 1}
	qm2  = [4]int{-7408, -1616, 7408, 1616}
	qm4  = [16]int{
		0, -20456, -12896, -8968, -6288, -4240, -2584, -1200,
		20456, 12896, 8968, 6288, 4240, 2584, 1200, 0,
	}
	qm6 = [64]int{
		-136, -136, -136, -136, -24808, -21904, -19008, -16704,
		-14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856,
		-7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576,
		-3168, -2776, -2400, -2032, -1688, -1360, -1040, -728,
		24808, 21904, 19008, 16704, 14984, 13512, 12280, 11192,
		10232, 9360, 8576, 7856, 7192, 6576, 6000, 5456,
		4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032,
		1688, 1360, 1040, 728, 432, 136, -432, -136,
	}
	ilb = [32]int{
		2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435, 2489, 2543,
		2599, 2656, 2714, 2774, 2834, 2896, 2960, 3025, 3091, 3158, 3228,
		3298, 3371, 3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008,
	}
	qmfEven = [12]int{3, -11, 12, 32, -210, 951, 3876, -805, 362, -156, 53, -11}
	qmfOdd  = [12]int{-11, 53, -156, 362, -805, 3876, 951, -210, 32, 12, -11, 3}
)
