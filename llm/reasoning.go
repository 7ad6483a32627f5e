package llm

import (
	"context"
	"strings"
)

// Reasoning effort settings beyond the API's enum (ReasoningEffort in the OpenAPI spec:
// none, minimal, low, medium, high, xhigh, max; the default is medium).
const (
	// EffortLowest asks for the lowest effort the model accepts (LowestReasoningEffort).
	EffortLowest = "lowest"
	// EffortDefault sends no effort: the API's default.
	EffortDefault = "default"
)

// ReasoningEfforts returns the reasoning efforts OpenAI accepts for model, lowest first, as
// its reasoning guide lists them (the API refuses the others with 400 unsupported_value);
// nil for a model that takes no reasoning effort (not a reasoning model, or one this table
// does not know, such as a compatible server's).
//
//	gpt-5, gpt-5-mini, gpt-5-nano (and snapshots)   minimal, low, medium, high
//	gpt-5.1…                                        none, low, medium, high
//	gpt-5.2 and later                               none, low, medium, high, xhigh
//	gpt-5…-codex                                    low, medium, high
//	gpt-5…-pro                                      high
//	o1, o3, o3-mini, o4-mini (and -pro)             low, medium, high
func ReasoningEfforts(model string) []string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "gpt-5"):
		rest := strings.TrimPrefix(m, "gpt-5")
		switch {
		case strings.HasPrefix(rest, "-chat"):
			return nil // gpt-5-chat-latest is not a reasoning model
		case strings.Contains(rest, "-pro"):
			return []string{"high"}
		case strings.Contains(rest, "-codex"):
			return []string{"low", "medium", "high"}
		case strings.HasPrefix(rest, ".1"):
			return []string{"none", "low", "medium", "high"}
		case strings.HasPrefix(rest, "."):
			return []string{"none", "low", "medium", "high", "xhigh"}
		case rest == "" || strings.HasPrefix(rest, "-"):
			return []string{"minimal", "low", "medium", "high"}
		}
	case m == "o1" || m == "o3" || m == "o3-mini" || m == "o4-mini" ||
		strings.HasPrefix(m, "o1-2") || strings.HasPrefix(m, "o3-") || strings.HasPrefix(m, "o4-mini-") || strings.HasPrefix(m, "o1-pro"):
		return []string{"low", "medium", "high"}
	}
	return nil
}

// ResolveReasoningEffort maps a configured effort onto what is sent for model: EffortLowest
// becomes the model's lowest accepted effort ("" for a model that takes none), EffortDefault
// and "" become "" (not sent), any other value is sent as given (the API judges it).
func ResolveReasoningEffort(model, setting string) string {
	switch setting {
	case "", EffortDefault:
		return ""
	case EffortLowest:
		if e := ReasoningEfforts(model); len(e) > 0 {
			return e[0]
		}
		return ""
	}
	return setting
}

// ClassifyWith returns a Classify function that sends, with each call, the reasoning effort
// effort() names for the call's model (ResolveReasoningEffort). effort is read per call, so
// a configuration reload applies to the next call.
func (c *Client) ClassifyWith(effort func() string) func(ctx context.Context, model, system, user string) (string, error) {
	return func(ctx context.Context, model, system, user string) (string, error) {
		return c.classify(ctx, model, system, user, ResolveReasoningEffort(model, effort()))
	}
}
