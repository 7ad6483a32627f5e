//go:build !race

package voice

const raceEnabled = false
