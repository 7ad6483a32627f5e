package voicesim

import (
	"math/rand/v2"
	"time"
)

// Direction says which leg of a member's UDP path a fault applies to.
type Direction uint8

// Directions.
const (
	DirectionUnknown Direction = iota
	// ToServer is what the server receives from the user.
	ToServer
	// FromServer is what the forwarding unit sends to the user.
	FromServer
)

// String names the direction.
func (d Direction) String() string {
	switch d {
	case ToServer:
		return "to-server"
	case FromServer:
		return "from-server"
	}
	return "unknown"
}

// Faults are UDP impairments for one user and direction. Percentages are
// per packet, 0 to 100; the decisions come from a math/rand PCG seeded
// with Seed, so a run is reproducible for the same packet sequence.
type Faults struct {
	LossPercent      float64 // drop the packet
	ReorderPercent   float64 // hold the packet and send it after the next one
	DuplicatePercent float64 // send the packet twice
	GarbagePercent   float64 // inject a datagram of random bytes before the packet
	// Delay holds every packet this long, and Jitter each a further uniform random 0 to Jitter:
	// a path whose queue delays packets by varying amounts. Packets keep their order (one
	// behind a later one waits for it), as through one router's queue.
	Delay, Jitter time.Duration
	Seed          uint64
}

func (f Faults) zero() bool {
	return f.LossPercent <= 0 && f.ReorderPercent <= 0 && f.DuplicatePercent <= 0 && f.GarbagePercent <= 0 &&
		f.Delay <= 0 && f.Jitter <= 0
}

type faultKey struct {
	user string
	dir  Direction
}

// faultPath applies Faults to a packet stream. It is used only from the
// UDP loop goroutine.
type faultPath struct {
	f    Faults
	rng  *rand.Rand
	held []byte
	last time.Time // when the last packet held by Delay or Jitter goes on
}

func newFaultPath(f Faults) *faultPath {
	return &faultPath{f: f, rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))}
}

// release is when a packet that reaches the path at now goes on (Delay, Jitter, and not
// before the packet ahead of it); ok is false when the path holds nothing.
func (fp *faultPath) release(now time.Time) (at time.Time, ok bool) {
	if fp.f.Delay <= 0 && fp.f.Jitter <= 0 {
		return time.Time{}, false
	}
	d := max(0, fp.f.Delay)
	if fp.f.Jitter > 0 {
		d += time.Duration(fp.rng.Int64N(int64(fp.f.Jitter) + 1))
	}
	at = now.Add(d)
	if at.Before(fp.last) {
		at = fp.last
	}
	fp.last = at
	return at, true
}

func (fp *faultPath) roll(pct float64) bool {
	return pct > 0 && fp.rng.Float64()*100 < pct
}

// apply passes pkt through the impairments, calling emit for every packet
// that goes on (emit must not keep the slice). It returns whether pkt
// itself was dropped.
func (fp *faultPath) apply(pkt []byte, emit func([]byte)) (dropped bool) {
	if fp.roll(fp.f.GarbagePercent) {
		g := make([]byte, 1+fp.rng.IntN(199))
		for i := range g {
			g[i] = byte(fp.rng.Uint32())
		}
		emit(g)
	}
	if fp.roll(fp.f.LossPercent) {
		return true
	}
	if fp.held == nil && fp.roll(fp.f.ReorderPercent) {
		fp.held = append([]byte(nil), pkt...)
		return false
	}
	emit(pkt)
	if fp.roll(fp.f.DuplicatePercent) {
		emit(pkt)
	}
	if fp.held != nil {
		h := fp.held
		fp.held = nil
		emit(h)
	}
	return false
}

// SetFaults sets the UDP impairments for a user's packets in one
// direction (all of the user's sessions). The zero Faults clears them.
func (s *Server) SetFaults(userID string, dir Direction, f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := faultKey{userID, dir}
	if f.zero() {
		delete(s.faults, k)
		return
	}
	s.faults[k] = newFaultPath(f)
}
