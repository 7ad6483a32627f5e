package openaisim

import (
	"fmt"
	"slices"
	"strings"
)

// apiEfforts is the ReasoningEffort enum of the OpenAPI spec.
var apiEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// modelEfforts returns the reasoning efforts OpenAI accepts for model, as its reasoning
// guide lists them; nil for a model that takes none (the API refuses the parameter). The
// real API enforces this at run time; the OpenAPI spec only has the enum.
//
//	gpt-5, gpt-5-mini, gpt-5-nano (and snapshots)   minimal, low, medium, high
//	gpt-5.1…                                        none, low, medium, high
//	gpt-5.2 and later                               none, low, medium, high, xhigh
//	gpt-5…-codex                                    low, medium, high
//	gpt-5…-pro                                      high
//	o1, o3, o3-mini, o4-mini (and -pro)             low, medium, high
func modelEfforts(model string) []string {
	m := strings.ToLower(model)
	if rest, ok := strings.CutPrefix(m, "gpt-5"); ok {
		switch {
		case strings.HasPrefix(rest, "-chat"):
			return nil
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
		return nil
	}
	if isReasoningModel(m) && !strings.HasPrefix(m, "o1-mini") && !strings.HasPrefix(m, "o1-preview") {
		return []string{"low", "medium", "high"}
	}
	return nil
}

// checkReasoningEffort refuses, with the API's errors, an effort outside the enum, any
// effort for a model that takes none, and an effort the model does not accept. param is
// "reasoning.effort" (responses) or "reasoning_effort" (chat completions).
func checkReasoningEffort(model, effort, param string) error {
	if !slices.Contains(apiEfforts, effort) {
		return &requestError{param: param, code: "invalid_value",
			msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", effort, quoteList(apiEfforts))}
	}
	allowed := modelEfforts(model)
	if allowed == nil {
		return &requestError{param: param, code: "unsupported_parameter",
			msg: fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", param)}
	}
	if !slices.Contains(allowed, effort) {
		return &requestError{param: param, code: "unsupported_value",
			msg: fmt.Sprintf("Unsupported value: '%s' is not supported with the '%s' model. Supported values are: %s.",
				effort, model, quoteList(allowed))}
	}
	return nil
}

// quoteList renders 'a', 'b', and 'c' as the API's messages do.
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "'" + v + "'"
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}
