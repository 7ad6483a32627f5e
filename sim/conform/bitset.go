package conform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// bitSetFields are the request properties that hold one of Discord's permission bit sets
// and that the Discord spec types as a bounded integer only.
//
// Discord's documentation types them as strings ("default_member_permissions: ?string, set
// of permissions represented as a bit set"; "permissions are stored in a variable-length
// integer serialized into a string"), the spec's own response schemas type them as
// strings, and the API takes both forms: discordgo and discord.js send the string.
var bitSetFields = []string{"default_member_permissions"}

// bitSetsAsDecimalStrings lets each property named in bitSetFields be, besides the integer
// the spec allows, a decimal string of an integer within the same bounds: canonical digits
// only (no sign, no leading zero, no exponent, no spaces), at most the spec's maximum. A
// bit-set property that is not a non-negative integer with a maximum is an error, so that
// a change of the spec is seen rather than silently loosened.
func bitSetsAsDecimalStrings(v any) error {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for name, sc := range props {
				if !slices.Contains(bitSetFields, name) {
					continue
				}
				widened, err := integerOrDecimalString(sc)
				if err != nil {
					return fmt.Errorf("property %s: %w", name, err)
				}
				props[name] = widened
			}
		}
		for _, c := range x {
			if err := bitSetsAsDecimalStrings(c); err != nil {
				return err
			}
		}
	case []any:
		for _, c := range x {
			if err := bitSetsAsDecimalStrings(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// integerOrDecimalString returns {"anyOf": [sc, decimal string within sc's bounds]}.
func integerOrDecimalString(sc any) (any, error) {
	m, ok := sc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	if !hasType(m["type"], "integer") {
		return nil, fmt.Errorf("type %v is not integer", m["type"])
	}
	lo, err := bound(m["minimum"])
	if err != nil || lo != 0 {
		return nil, fmt.Errorf("minimum %v: want 0", m["minimum"])
	}
	hi, err := bound(m["maximum"])
	if err != nil {
		return nil, fmt.Errorf("maximum %v: %w", m["maximum"], err)
	}
	return map[string]any{"anyOf": []any{sc, map[string]any{"type": "string", "pattern": decimalPattern(hi)}}}, nil
}

func hasType(t any, want string) bool {
	switch x := t.(type) {
	case string:
		return x == want
	case []any:
		return slices.Contains(x, any(want))
	}
	return false
}

// bound reads a schema's minimum or maximum as an unsigned integer.
func bound(v any) (uint64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case nil:
		return 0, fmt.Errorf("missing")
	default:
		s = fmt.Sprint(x)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not an unsigned integer: %w", err)
	}
	return n, nil
}

// decimalPattern is a regular expression matching exactly the canonical decimal spellings
// of the integers 0 to max: "0", any shorter number without a leading zero, and the numbers
// as long as max that are not above it (for each digit of max, its prefix, then a smaller
// digit, then any digits; and max itself).
func decimalPattern(max uint64) string {
	s := strconv.FormatUint(max, 10)
	d := len(s)
	alts := []string{"0"}
	if d >= 2 {
		alts = append(alts, "[1-9]"+anyDigits(d-2, true))
	}
	for i := range d {
		lo := byte('0')
		if i == 0 {
			lo = '1'
		}
		if s[i] > lo {
			alts = append(alts, s[:i]+"["+string(lo)+"-"+string(s[i]-1)+"]"+anyDigits(d-i-1, false))
		}
	}
	if max > 0 {
		alts = append(alts, s)
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

// anyDigits matches n digits, or 0 to n with upTo.
func anyDigits(n int, upTo bool) string {
	switch {
	case n == 0 && !upTo:
		return ""
	case upTo:
		return "[0-9]{0," + strconv.Itoa(n) + "}"
	}
	return "[0-9]{" + strconv.Itoa(n) + "}"
}
