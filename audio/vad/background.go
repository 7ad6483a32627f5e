package vad

import "math"

// background tracks a stream's background level: the frame energy exceeded
// by 80 % of the frames of the last few seconds (a low percentile, not the
// minimum the noise floor uses). Speech pauses pull it down; a room full of
// chatter keeps it up, because babble's gaps are short and rare, where one
// near voice leaves many. A voice that stands out of the room is several dB
// over it; the room's own louder moments are not.
//
// Energies are counted in 1 dB bins over a ring of the last frames, so an
// update is O(1) and a query scans at most the bins (no sort, no
// allocation). A few frames at the prior level count as history forever:
// until a fifth of the window is real, a stream that starts loud is
// measured against the prior, as the noise floor is.
type background struct {
	ring   []uint8 // bin of each of the last frames
	next   int
	n      int
	counts [bgBins]int32
	prior  int // bin of the prior entries
}

const (
	bgBins   = 121 // -120..0 dBFS
	bgPriorN = 2   // prior entries
	bgShare  = 0.2 // the percentile
)

func newBackground(frames int, priorDB float64) *background {
	return &background{ring: make([]uint8, frames), prior: bgBin(priorDB)}
}

func bgBin(db float64) int {
	return min(bgBins-1, max(0, int(math.Floor(db))+bgBins-1))
}

func (b *background) add(db float64) {
	if b.n == len(b.ring) {
		b.counts[b.ring[b.next]]--
	} else {
		b.n++
	}
	k := bgBin(db)
	b.ring[b.next] = uint8(k)
	b.counts[k]++
	b.next = (b.next + 1) % len(b.ring)
}

// level returns the background level in dBFS (the lower edge of its bin).
func (b *background) level() float64 { return b.levelAt(bgShare) }

// levelAt returns the level a share 1-q of the frames exceeded (q = 0.2: level), in dBFS.
func (b *background) levelAt(q float64) float64 {
	total := b.n + bgPriorN
	want := int32(q * float64(total-1))
	var cum int32
	for k := range b.counts {
		c := b.counts[k]
		if k == b.prior {
			c += bgPriorN
		}
		cum += c
		if cum > want {
			return float64(k - (bgBins - 1))
		}
	}
	return 0
}

func (b *background) reset() {
	b.n, b.next = 0, 0
	b.counts = [bgBins]int32{}
}
