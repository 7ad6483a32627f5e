package realtime

import "fmt"

// Strategy is voice.realtimeReplyStrategy: how the decision engine is
// applied to a realtime voice session.
type Strategy uint8

// Strategies. The zero value is StrategyUnknown.
const (
	StrategyUnknown Strategy = iota
	// StrategyNative forwards each Stage-A-admitted turn's audio and lets
	// the realtime model answer it (no local [SKIP] stage).
	StrategyNative
	// StrategyBrain has the session's own generation write the reply (with
	// [SKIP]); the realtime model only voices that text.
	StrategyBrain
	strategyCount
)

// String returns the configuration value ("native", "brain") or "unknown".
func (s Strategy) String() string {
	switch s {
	case StrategyNative:
		return "native"
	case StrategyBrain:
		return "brain"
	}
	return "unknown"
}

func (s Strategy) index() Strategy {
	if s >= strategyCount {
		return StrategyUnknown
	}
	return s
}

// ParseStrategy parses voice.realtimeReplyStrategy.
func ParseStrategy(v string) (Strategy, error) {
	switch v {
	case "native":
		return StrategyNative, nil
	case "brain":
		return StrategyBrain, nil
	}
	return StrategyUnknown, fmt.Errorf("realtime: unknown reply strategy %q (want native or brain)", v)
}
