package openaisim

import "math"

const (
	synthBlock = SpeechRate / 200 // 5 ms: pitch and formant targets move per block
	edgeRamp   = 0.008 * SpeechRate
	// smoothing per block (formants, pitch) and per sample (amplitudes)
	formantGlide = 0.3
	pitchGlide   = 0.35
	voiceAttack  = 1.0 / (0.004 * SpeechRate)
	noiseAttack  = 1.0 / (0.0015 * SpeechRate)
)

// synth is the state of one Synthesize call: the signal so far and the
// voice's state carried from sample to sample (source, tract, noise).
type synth struct {
	buf   []float32
	rng   xorshift
	base  float64 // the voice's mean fundamental, Hz
	scale float64 // formant scale: shorter vocal tracts for higher voices
	src   glottis
	tract [5]resonator // cascade F1..F5
	band  resonator    // frication band
	dc    dcBlocker
	form  [3]float64 // F1..F3 now
	f0    float64    // fundamental now
	// amplitudes now: voicing, aspiration (noise into the tract), frication
	av, ah, af float64
}

func newSynth(total int, base float64, seed uint64) *synth {
	sy := &synth{buf: make([]float32, total), rng: xorshift(seed), base: base, f0: base}
	sy.scale = 1 + 0.17*(base-95)/140
	sy.tract[3].tune(3500*sy.scale, 250)
	sy.tract[4].tune(4500*sy.scale, 300)
	sy.dc.r = math.Exp(-2 * math.Pi * 60 / SpeechRate)
	sy.src.step = base / SpeechRate
	return sy
}

// wordPlan is one word to render: its phones, its samples [s0, s0+n), its
// phrase's samples [p0, p1) and whether it ends the phrase (a question's?).
type wordPlan struct {
	phones         []phone
	s0, n          int
	p0, p1         int
	last, question bool
}

// controls are the targets of one block: what sounds, how loud, through
// which formants, and the pitch accent.
type controls struct {
	av, ah, af float64
	form, bw   [3]float64
	hiss       hiss
	accent     float64
}

// word renders w: the word's time is shared among its phones by weight
// (stressed vowels and a phrase's last vowel longer), each phone rendered
// block by block, then the word is faded in and out over a few ms.
func (sy *synth) word(w wordPlan) {
	bounds, sylls := sy.layout(w)
	first := true
	for i := range w.phones {
		a, b := bounds[i], bounds[i+1]
		nb := neighbourVowel(w.phones, i)
		for b0 := a; b0 < b; b0 += synthBlock {
			b1 := min(b0+synthBlock, b)
			u := (float64(b0+b1)/2 - float64(a)) / float64(b-a)
			c := sy.controlsFor(&w.phones[i], nb, u, sylls[i])
			if first {
				sy.form, first = c.form, false
			}
			sy.retune(c, w, b0)
			sy.render(w.s0+b0, w.s0+b1, c)
		}
	}
	ramp := min(float64(w.n)/4, edgeRamp)
	for i := 0; float64(i) < ramp; i++ {
		g := 0.5 - 0.5*math.Cos(math.Pi*float64(i)/ramp)
		sy.buf[w.s0+i] *= float32(g)
		sy.buf[w.s0+w.n-1-i] *= float32(g)
	}
}

// layout shares the word's n samples among its phones: bounds[i] is where
// phone i starts (bounds[len] = n); sylls[i] is its syllable, the first
// syllable of a word of four phones or more, or of a phrase's last word,
// stressed.
func (sy *synth) layout(w wordPlan) (bounds []int, sylls []syllable) {
	weights := make([]float64, len(w.phones))
	sylls = make([]syllable, len(w.phones))
	lastVowel, nucleus := -1, 0
	stressed := len(w.phones) >= 4 || w.last
	for i, p := range w.phones {
		weights[i] = p.weight
		if p.manner == vowel {
			if i == 0 || w.phones[i-1].manner != vowel {
				nucleus++
			}
			lastVowel = i
			if nucleus == 1 && stressed {
				weights[i] *= 1.3
			}
		}
		sylls[i] = syllable{amp: 0.72 + 0.16*sy.rng.uniform()}
		if nucleus <= 1 && stressed {
			sylls[i] = syllable{amp: 1, stressed: true}
		}
	}
	if w.last && lastVowel >= 0 {
		weights[lastVowel] *= 1.4
	}
	sum := 0.0
	for _, x := range weights {
		sum += x
	}
	bounds = make([]int, len(weights)+1)
	acc := 0.0
	for i, x := range weights {
		acc += x
		bounds[i+1] = int(math.Round(acc / sum * float64(w.n)))
	}
	bounds[len(weights)] = w.n
	return bounds, sylls
}

// syllable is what a phone takes from its syllable: loudness, and stress
// (a pitch accent).
type syllable struct {
	amp      float64
	stressed bool
}

// neighbourVowel is the vowel a consonant at i leans on: the next one in the
// word, else the one before, else a neutral vowel.
func neighbourVowel(ps []phone, i int) *phone {
	for j := i; j < len(ps); j++ {
		if ps[j].manner == vowel {
			return &ps[j]
		}
	}
	for j := i - 1; j >= 0; j-- {
		if ps[j].manner == vowel {
			return &ps[j]
		}
	}
	return &schwa
}

// controlsFor are the targets of phone p at fraction u of it, next to
// vowel nb, in syllable syl.
func (sy *synth) controlsFor(p, nb *phone, u float64, syl syllable) controls {
	amp := syl.amp
	c := controls{form: nb.formants, bw: [3]float64{70, 100, 160}, hiss: p.hiss}
	switch p.manner {
	case vowel:
		c.form = p.formants
		c.av = amp * (0.6 + 0.4*math.Sin(math.Pi*u))
		c.ah = 0.02 * amp
		if syl.stressed {
			c.accent = 0.1 * math.Sin(math.Pi*u)
		}
	case glide:
		c.form, c.bw, c.av = p.formants, [3]float64{80, 120, 180}, 0.6*amp
	case nasal:
		c.form, c.bw, c.av = p.formants, [3]float64{100, 300, 400}, 0.45*amp
	case fricative:
		c.af = p.hiss.level
		if p.voiced {
			c.form, c.av = p.formants, 0.25*amp
		}
	case aspirate:
		c.ah = 0.3
	case stop:
		c.form[0], c.form[1] = 250, (p.formants[1]+2*nb.formants[1])/3
		switch {
		case u < 0.55: // closure: silence, or a voice bar
			if p.voiced {
				c.av = 0.1 * amp
			}
		case u < 0.7: // burst
			c.af, c.ah = p.hiss.level*(1-(u-0.55)/0.15), 0.1
		case p.voiced:
			c.form, c.av = nb.formants, 0.5*amp
		default: // aspiration into the vowel
			c.form, c.ah = nb.formants, 0.25
		}
	}
	return c
}

// retune moves the formants and the pitch a step toward the block's targets
// and sets the resonators. The pitch follows the phrase: declining from its
// start, raised by accents, falling at its end (rising for a question).
func (sy *synth) retune(c controls, w wordPlan, at int) {
	for k := range sy.form {
		sy.form[k] += formantGlide * (c.form[k] - sy.form[k])
		sy.tract[k].tune(sy.form[k]*sy.scale, c.bw[k])
	}
	if c.af > 0 {
		sy.band.tuneBand(c.hiss.centre*sy.scale, c.hiss.bw)
	}
	t := w.s0 + at
	x := float64(t-w.p0) / float64(max(1, w.p1-w.p0))
	target := sy.base * (1.08 - 0.16*x) * (1 + c.accent)
	tail := min(0.3*SpeechRate, float64(w.p1-w.p0)/3)
	if y := float64(t-(w.p1-int(tail))) / tail; y > 0 {
		if w.question {
			target *= 1 + 0.3*y*y
		} else {
			target *= 1 - 0.12*y
		}
	}
	target *= 1 + 0.015*math.Sin(2*math.Pi*3.3*float64(t)/SpeechRate)
	sy.f0 += pitchGlide * (target - sy.f0)
}

// render writes samples [from, to) at the block's targets.
func (sy *synth) render(from, to int, c controls) {
	for i := from; i < to; i++ {
		sy.av += voiceAttack * (c.av - sy.av)
		sy.ah += noiseAttack * (c.ah - sy.ah)
		sy.af += noiseAttack * (c.af - sy.af)
		pulse, open := sy.src.next(sy.f0, &sy.rng)
		noise := sy.rng.uniform()*2 - 1
		breath := sy.ah + sy.av*0.03*open
		x := sy.av*pulse + 1.5*breath*noise
		for k := range sy.tract {
			x = sy.tract[k].step(x)
		}
		x += 8 * sy.af * sy.band.step(noise)
		sy.buf[i] = float32(sy.dc.step(x))
	}
}

// xorshift is the synth's random generator (Marsaglia's xorshift64); its
// state must not be zero.
type xorshift uint64

// uniform returns the next value in [0, 1).
func (x *xorshift) uniform() float64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return float64(*x>>11) / float64(1<<53)
}

// glottis is the voice source: the derivative of a Rosenberg glottal pulse
// (opening over 40 % of the period, closing over 20 %, then closed), each
// period a little longer or shorter (jitter) and louder or softer (shimmer).
type glottis struct{ phase, step, amp float64 }

const (
	openRise = 0.4
	openFall = 0.2
	jitter   = 0.01
	shimmer  = 0.06
)

// next advances one sample at fundamental f0 and returns the source and
// whether the glottis is open (1) or closed (0).
func (g *glottis) next(f0 float64, rng *xorshift) (pulse, open float64) {
	g.phase += g.step
	if g.phase >= 1 {
		g.phase -= 1
		g.step = f0 / SpeechRate * (1 + jitter*(rng.uniform()-0.5))
		g.amp = 1 + shimmer*(rng.uniform()-0.5)
	}
	switch p := g.phase; {
	case p < openRise:
		return g.amp * math.Pi / 2 * openFall / openRise * math.Sin(math.Pi*p/openRise), 1
	case p < openRise+openFall:
		return -g.amp * math.Pi / 2 * math.Sin(math.Pi/2*(p-openRise)/openFall), 1
	}
	return 0, 0
}

// resonator is a two-pole filter (Klatt's): a formant with unity gain at
// 0 Hz (tune) or a band with unity gain at its centre (tuneBand).
type resonator struct{ a, b, c, y1, y2 float64 }

func (r *resonator) tune(f, bw float64) {
	r.c = -math.Exp(-2 * math.Pi * bw / SpeechRate)
	r.b = 2 * math.Exp(-math.Pi*bw/SpeechRate) * math.Cos(2*math.Pi*f/SpeechRate)
	r.a = 1 - r.b - r.c
}

func (r *resonator) tuneBand(f, bw float64) {
	f = min(f, 0.45*SpeechRate)
	rad, th := math.Exp(-math.Pi*bw/SpeechRate), 2*math.Pi*f/SpeechRate
	r.b, r.c = 2*rad*math.Cos(th), -rad*rad
	r.a = (1 - rad) * math.Sqrt(1-2*rad*math.Cos(2*th)+rad*rad)
}

func (r *resonator) step(x float64) float64 {
	y := r.a*x + r.b*r.y1 + r.c*r.y2
	r.y2, r.y1 = r.y1, y
	return y
}

// dcBlocker takes out what is below ~60 Hz, as a microphone's path does.
type dcBlocker struct{ r, x1, y1 float64 }

func (d *dcBlocker) step(x float64) float64 {
	y := x - d.x1 + d.r*d.y1
	d.x1, d.y1 = x, y
	return y
}
