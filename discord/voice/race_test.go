//go:build race

package voice

// raceEnabled: sync.Pool drops items at random under the race detector, so
// x/net's pooled sendmmsg headers allocate now and then there.
const raceEnabled = true
